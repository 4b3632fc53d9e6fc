"""The operator's bounds on every hosted program (docs/hosted-bots.md#the-limits). One frozen
value, handed to the sandbox and the agent; it has no I/O so the runner, the server's settings
and the tests can all build one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    memory_mib: int = 512  # resident memory (the cgroup's bound), and the address space's floor
    decision_seconds: float = 5.0  # wall time for one answer (under a clock: the smaller)
    cpu_seconds: float = 300.0  # CPU time of one program (one game): each process's, and all together
    processes: int = 32  # tasks (processes and threads) inside the sandbox
    open_files: int = 64
    output_bytes: int = 1 << 20  # stdout in total per program
    tmp_mib: int = 64  # its private writable /tmp (a tmpfs of that size; also the largest file)
    # Runtimes reserve far more address space than they touch (node v20 will not start under
    # 1 GiB of RLIMIT_AS), so the address space is bounded apart from resident memory: where
    # cgroups are missing this is the only memory bound, and an 8 GiB allocation still fails.
    address_space_mib: int = 4096
    line_bytes: int = 64 << 10  # one line of stdout (one answer); also each stderr line kept
    stderr_bytes: int = 1 << 20  # stderr in total per program (it goes to the bot's log)
    stderr_lines: int = 20  # the last lines of stderr a failure carries
    cpu_cores: float = 1.0  # CPU bandwidth of the whole program, in cores (where a cpu cgroup can be made)

    def __post_init__(self) -> None:
        for name in ("memory_mib", "processes", "open_files", "output_bytes", "tmp_mib", "line_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"hosted bot limit {name} must be at least 1")
        if self.decision_seconds <= 0 or self.cpu_seconds <= 0 or self.cpu_cores <= 0:
            raise ValueError("hosted bot time limits must be positive")
        if self.processes < 4:
            # the sandbox's own init process and the wrapper that sets the limits count too
            raise ValueError("hosted bot limit processes must be at least 4")
