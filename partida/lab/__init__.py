"""The game lab: simulate matches in-process, record per-round scores, compute the
game-quality metrics of specs/metrics.md, store runs, report and plot them (docs/lab.md)."""
