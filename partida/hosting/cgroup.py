"""A cgroup per hosted program where the machine lets the server make one: the kernel then
bounds the program's resident memory and its tasks as one group (rlimits count per process),
and says when it killed the program for memory. Each group is made under the server's own
cgroup (never at the hierarchy's root, which belongs to whoever runs the machine), for cgroup
v1 (the memory and pids controllers) and v2 (memory.max, pids.max). Where none can be made the
sandbox falls back to rlimits alone and says so once in the log."""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

ROOT = Path("/sys/fs/cgroup")
PERIOD = 100_000  # microseconds: the CPU bandwidth's period


def _own_paths() -> dict[str, str]:
    """The server's own cgroup per v1 controller ("" for v2's unified one)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


@dataclass
class Cgroup:
    """One program's groups: `dirs` one per controller (v1) or a single one (v2)."""

    dirs: list[Path]
    v2: bool
    procs: list[int] = field(default_factory=list)  # fds of cgroup.procs, opened before the fork

    def open_for_child(self) -> None:
        """Open the cgroup.procs files now (as the server), so the child only writes to them."""
        self.procs = [os.open(d / "cgroup.procs", os.O_WRONLY) for d in self.dirs]

    def join(self) -> None:
        """Runs in the child between fork and exec: it enters its groups before it can start
        anything, so nothing it forks is left outside them. Async-signal-safe calls only."""
        for fd in self.procs:
            os.write(fd, b"0")

    def close_fds(self) -> None:
        for fd in self.procs:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.procs = []

    def oom_killed(self) -> bool:
        """The kernel killed a task of the group for memory (its OOM killer in the group)."""
        for d in self.dirs:
            name = "memory.events" if self.v2 else "memory.oom_control"
            try:
                text = (d / name).read_text()
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip() not in ("", "0"):
                    return True
        return False

    def remove(self) -> None:
        """The group ends with its program: kill what is left in it, then remove it."""
        self.close_fds()
        for d in self.dirs:
            for _ in range(50):
                try:
                    pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, 9)
                os.sched_yield()
            with contextlib.suppress(OSError):
                d.rmdir()


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _v1_parent(controller: str, own: dict[str, str]) -> Path | None:
    base = ROOT / controller
    if controller not in own or not base.is_dir():
        return None
    parent = base / own[controller].lstrip("/")
    return parent if os.access(parent, os.W_OK) else None


def make(memory_bytes: int, tasks: int, cpu_cores: float) -> Cgroup | None:
    """A fresh group bounding memory and tasks, or None where cgroups cannot be used here; its
    CPU bandwidth too where a cpu group can be made (optional: rlimits and nice bound the rest)."""
    if not usable():
        return None
    name = f"partida-bot-{uuid.uuid4().hex[:12]}"
    own = _own_paths()
    made: list[Path] = []
    try:
        if (ROOT / "cgroup.controllers").exists():  # v2 only
            d = ROOT / own.get("", "/").lstrip("/") / name
            d.mkdir()
            made.append(d)
            _write(d / "memory.max", str(memory_bytes))
            with contextlib.suppress(OSError):
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(tasks))
            with contextlib.suppress(OSError):  # only where the cpu controller is delegated
                _write(d / "cpu.max", f"{round(cpu_cores * PERIOD)} {PERIOD}")
            return Cgroup(made, v2=True)
        cpu = ("cpu",) if _v1_parent("cpu", own) is not None else ()
        for controller in ("memory", "pids", *cpu):
            parent = _v1_parent(controller, own)
            assert parent is not None  # usable() checked it (and the line above for cpu)
            d = parent / name
            d.mkdir()
            made.append(d)
            if controller == "memory":
                _write(d / "memory.limit_in_bytes", str(memory_bytes))
                with contextlib.suppress(OSError):  # only with swap accounting
                    _write(d / "memory.memsw.limit_in_bytes", str(memory_bytes))
            elif controller == "pids":
                _write(d / "pids.max", str(tasks))
            else:
                _write(d / "cpu.cfs_period_us", str(PERIOD))
                _write(d / "cpu.cfs_quota_us", str(round(cpu_cores * PERIOD)))
        return Cgroup(made, v2=False)
    except OSError as exc:
        log.warning("hosted bots: cannot make a cgroup (%s); this program is bounded by rlimits only", exc)
        Cgroup(made, v2=False).remove()
        return None


def _v2_controllers(own: dict[str, str]) -> set[str]:
    """The controllers the server's own v2 group hands to the groups below it."""
    if not (ROOT / "cgroup.controllers").exists():
        return set()
    try:
        return set((ROOT / own.get("", "/").lstrip("/") / "cgroup.subtree_control").read_text().split())
    except OSError:
        return set()


@cache
def usable() -> bool:
    """Whether groups can be made here; the answer is logged once, saying which bounds apply."""
    own = _own_paths()
    if (ROOT / "cgroup.controllers").exists():
        parent = ROOT / own.get("", "/").lstrip("/")
        ok = {"memory", "pids"} <= _v2_controllers(own) and os.access(parent, os.W_OK)
    else:
        ok = all(_v1_parent(c, own) is not None for c in ("memory", "pids"))
    if ok:
        cpu = _v1_parent("cpu", own) is not None or "cpu" in _v2_controllers(own)
        log.info("hosted bots: bounded by cgroups (memory, pids%s) and rlimits", ", cpu" if cpu else "")
    else:
        log.info("hosted bots: no writable memory and pids cgroups here; bounded by rlimits only")
    return ok
