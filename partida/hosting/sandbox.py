"""Starting a hosted program under bubblewrap, within the operator's limits.

The program sees a filesystem of its own: the runtimes (/usr and the /bin, /lib links, a few
files of /etc) read-only, its bundle read-only at /bot (its working directory), a private /tmp
of `tmp_mib`, a fresh /proc and a minimal /dev. Nothing else of the machine is mounted: not the
server's database, its files, its working directory, nor another bot's bundle. It has its own
user, PID, network (no interface but its own loopback: no way to the server or out), IPC and
UTS namespaces, a new session (no terminal to push keys into), no capabilities, no new
privileges, no further user namespaces, and it dies with the server. The server starts bwrap as
`nobody` (65534) where it runs as root, so even outside its namespaces the program is no one.
(bwrap started as root with `--unshare-user --uid 65534` would map the program to root outside,
and the kernel then does not enforce RLIMIT_NPROC on it: a fork bomb goes through.)

Limits: rlimits set by `prlimit` inside the sandbox just before the program (RLIMIT_NPROC
counts per user and user namespace, so set there it bounds this program's tasks alone, not
every sandbox's together); RLIMIT_CORE is 0. Where the machine lets the server make cgroups,
a memory and a pids group per program as well, and a cpu one where that controller is
delegated too (cgroup.py). Every program runs at niceness 10: the server's games come first.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from partida.bots.engines.process import EngineProcess, OutputCaps
from partida.hosting import cgroup
from partida.hosting.limits import Limits

log = logging.getLogger(__name__)

NOBODY = 65534
BOT_DIR = "/bot"  # where the bundle appears inside the sandbox
PATH = "/usr/local/bin:/usr/bin:/bin"
PRLIMIT = "/usr/bin/prlimit"  # util-linux: on every Debian system, and mounted with /usr
# Files of /etc a python3 or node program may read at start; nothing with secrets.
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "mime.types", "nsswitch.conf")
PROBE_SECONDS = 10.0
NICE = 10  # a hosted program's niceness: the server and its games come first
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def bwrap_path() -> str | None:
    found = shutil.which("bwrap")
    if found:
        return found
    return "/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None


def _root_links() -> list[str]:
    """/bin, /lib, /lib64, /sbin: links into /usr on a merged-/usr system, directories else."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


def rlimit_argv(limits: Limits) -> list[str]:
    """`prlimit` setting every bound (soft = hard: the program cannot raise them). The CPU hard
    limit is a second above the soft one: SIGXCPU first, SIGKILL if the program ignores it."""
    mib = 1 << 20
    cpu = max(1, round(limits.cpu_seconds))
    space = max(limits.address_space_mib, limits.memory_mib) * mib
    return [
        PRLIMIT,
        f"--as={space}:{space}",
        f"--cpu={cpu}:{cpu + 1}",
        f"--nproc={limits.processes}:{limits.processes}",
        f"--nofile={limits.open_files}:{limits.open_files}",
        f"--fsize={limits.tmp_mib * mib}:{limits.tmp_mib * mib}",
        "--core=0:0",
        "--",
    ]


def bwrap_argv(bundle_dir: Path, argv: list[str], limits: Limits, bwrap: str | None = None) -> list[str]:
    """The whole command line: bwrap, its mounts and namespaces, prlimit, the program."""
    args = [bwrap or bwrap_path() or "bwrap"]
    args += ["--unshare-all", "--unshare-user", "--disable-userns", "--unshare-cgroup-try"]
    args += ["--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "bot"]
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--ro-bind", "/usr", "/usr", *_root_links()]
    for name in ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(limits.tmp_mib << 20), "--perms", "1777", "--tmpfs", "/tmp"]
    args += ["--ro-bind", str(Path(bundle_dir).resolve()), BOT_DIR, "--chdir", BOT_DIR]
    # bwrap's own root and /dev are tmpfs the program could fill past `tmp_mib` (and, without
    # a memory cgroup, past every limit): read-only, so /tmp is the one place it writes
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    args += ["--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1"]
    args += ["--setenv", "PYTHONUNBUFFERED", "1"]
    return args + rlimit_argv(limits) + argv


def _as_nobody() -> dict[str, Any]:
    """Popen's options dropping root before bwrap runs (bwrap then makes its user namespace
    unprivileged). A server not running as root starts it as itself."""
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def sandbox_missing() -> str | None:
    """None where hosted programs can be sandboxed here; else the sentence saying why not.
    Tried once: a program run in the very sandbox the bots get."""
    return missing_with(bwrap_path())


@cache
def missing_with(bwrap: str | None) -> str | None:
    """`sandbox_missing` for a given bwrap (None: not installed)."""
    if bwrap is None:
        return (
            "hosted bots need bubblewrap to run submissions in a sandbox, and `bwrap` is not installed "
            "(on Debian or Ubuntu: apt-get install bubblewrap)"
        )
    if not os.access(PRLIMIT, os.X_OK):
        return f"hosted bots need {PRLIMIT} (util-linux) to set a program's limits, and it is missing"
    probe = Path("/usr")  # any directory every user may read serves as the bundle
    argv = bwrap_argv(probe, ["/bin/sh", "-c", "exit 0"], Limits(), bwrap)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_SECONDS, cwd="/", **_as_nobody())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"hosted bots cannot run bubblewrap ({bwrap}) here: {exc}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            f"hosted bots cannot sandbox a program here: bubblewrap cannot create its namespaces ({said}); "
            "it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
            "user.max_user_namespaces > 0) or a container that allows them"
        )
    return None


class SandboxedProgram(EngineProcess):
    """An engine process whose program runs in the sandbox, with the output caps of `limits`,
    a cgroup of its own where there can be one, and the memory verdict that only the cgroup
    knows. Never started again within its game (restarts=0): a dead program has lost."""

    def __init__(self, bundle_dir: Path, run: str, limits: Limits, label: str) -> None:
        caps = OutputCaps(
            line_chars=limits.line_bytes,
            total_chars=limits.output_bytes,
            stderr_chars=limits.stderr_bytes,
            stderr_lines=limits.stderr_lines,
        )
        super().__init__(run, label, restarts=0, caps=caps)
        self.bundle_dir = Path(bundle_dir)
        self.limits = limits
        self.cgroup: cgroup.Cgroup | None = None
        self.oom_killed = False

    def _spawn_argv(self) -> list[str]:
        return bwrap_argv(self.bundle_dir, self.argv, self.limits)

    def _spawn_options(self) -> dict[str, Any]:
        self._drop_cgroup()
        limits = self.limits
        self.cgroup = cgroup.make(limits.memory_mib << 20, limits.processes + 2, limits.cpu_cores)
        if self.cgroup is not None:
            self.cgroup.open_for_child()
        return {"cwd": "/", "env": {"PATH": PATH}, "preexec_fn": self._in_child, **_as_nobody()}

    def _in_child(self) -> None:
        """Between fork and exec (already nobody): into the cgroup before anything can fork, and
        a lower priority than the server's, so a busy program yields the CPU to the games."""
        if self.cgroup is not None:
            self.cgroup.join()
        os.nice(NICE)

    def _spawned(self) -> None:
        if self.cgroup is not None:
            self.cgroup.close_fds()

    def _reaped(self) -> None:
        if self.cgroup is not None and self.cgroup.oom_killed():
            self.oom_killed = True
        self._drop_cgroup()

    def returncode(self) -> int | None:
        """bwrap's exit status (its program's, 128 + N for a signal), once it ended."""
        proc = self._proc
        if proc is None:
            return None
        try:
            return proc.wait(0.5)
        except subprocess.TimeoutExpired:
            return None

    def cpu_used(self) -> float:
        """CPU seconds the program has used in total so far: every live process of the sandbox
        (found from bwrap down through /proc's children lists) and all they reaped. rlimits
        count per process; this counts the program."""
        proc = self._proc
        if proc is None:
            return 0.0
        total, todo, seen = 0, [proc.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError, IndexError):
                continue  # it ended meanwhile
        return total / CLOCK_TICKS

    def memory_killed(self) -> bool:
        """The cgroup's OOM killer ended the program (known only where there is a cgroup)."""
        return self.oom_killed or (self.cgroup is not None and self.cgroup.oom_killed())

    def _drop_cgroup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
