"""A hostile hosted bot for the sandbox's tests: `python3 hostile.py MODE [ARGS...]` tries one
attack at its first decision. Where the attack is meant to fail inside the program (reading,
connecting, signalling, filling /tmp) it reports what it managed on stderr as one line
`REPORT {json}` and answers legally, so the test can both see the report and see the program
still playing. The other modes never answer or die, and the sandbox's verdict is the result."""

import json
import os
import signal
import socket
import sys
import time

MODE, ARGS = sys.argv[1], sys.argv[2:]
MIB = 1 << 20


def report(**what):
    print("REPORT " + json.dumps(what), file=sys.stderr, flush=True)


def read_everything():
    seen = {}
    for path in ARGS:
        try:
            if os.path.isdir(path):
                seen[path] = "listed " + ",".join(sorted(os.listdir(path))[:20])
            else:
                with open(path, "rb") as f:
                    seen[path] = f"read {len(f.read(1 << 16))} bytes"
        except OSError as exc:
            seen[path] = f"failed: {type(exc).__name__}"
    report(read=seen)


def connect_everywhere():
    seen = {}
    for target in ARGS:
        host, port = target.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                seen[target] = "connected"
        except OSError as exc:
            seen[target] = f"failed: {type(exc).__name__}"
    report(connect=seen)


def fork_bomb():
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)


def fork_and_count():
    children = 0
    for _ in range(10000):
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        except OSError:
            break
        children += 1
    report(forked=children)


def allocate_at_once():
    block = bytearray(8 << 30)  # 8 GiB in one piece: past the address space
    report(allocated=len(block))


def allocate_and_touch():
    blocks = []
    for _ in range(8 << 10 >> 6):  # 8 GiB in 64 MiB blocks, each written: past resident memory
        blocks.append(b"x" * (64 * MIB))
    report(allocated=len(blocks) * 64 * MIB)


def fill_tmp():
    written, error = 0, None
    chunk = b"\0" * MIB
    try:
        with open("/tmp/fill", "wb") as f:
            while written < (8 << 30):
                f.write(chunk)
                f.flush()
                written += MIB
    except OSError as exc:
        error = type(exc).__name__ + " " + (exc.strerror or "")
    n = 0
    while error and written < (8 << 30) and n < 100:  # more files, past the one-file limit
        try:
            with open(f"/tmp/more{n}", "wb") as f:
                f.write(chunk)
                written += MIB
        except OSError:
            break
        n += 1
    report(written=written, error=error)


def fill_root():
    """Write where /tmp's cap does not reach: the sandbox's own root and /dev."""
    wrote = {}
    for path in ("/fill", "/dev/fill", "/dev/shm/fill", "/bot/fill", "/etc/fill", "/usr/fill"):
        try:
            with open(path, "wb") as f:
                f.write(b"\0" * MIB)
            wrote[path] = "written"
        except OSError as exc:
            wrote[path] = type(exc).__name__
    report(wrote=wrote)


def flood_one_line():
    chunk = "x" * MIB
    for _ in range(100):
        sys.stdout.write(chunk)
    sys.stdout.flush()


def flood_stderr():
    line = "z" * 1000 + "\n"
    for _ in range(100 * MIB // len(line)):
        sys.stderr.write(line)


def kill_parents():
    seen = {"ppid": os.getppid(), "pid": os.getpid()}
    for name, pid in (("parent", os.getppid()), ("init", 1), ("everyone", -1)):
        try:
            os.kill(pid, signal.SIGKILL)
            seen[name] = "sent"
        except OSError as exc:
            seen[name] = f"failed: {type(exc).__name__}"
    report(kill=seen)


def spin_children():
    for _ in range(4):  # each under RLIMIT_CPU alone; together past the program's CPU time
        if os.fork() == 0:
            spin()


def spin():
    while True:
        pass


ATTACKS = {
    "read": read_everything,
    "connect": connect_everywhere,
    "fork_bomb": fork_bomb,
    "fork_count": fork_and_count,
    "alloc_8g": allocate_at_once,
    "alloc_touch": allocate_and_touch,
    "fill_tmp": fill_tmp,
    "fill_root": fill_root,
    "flood_line": flood_one_line,
    "flood_stderr": flood_stderr,
    "sleep": lambda: time.sleep(10**6),
    "kill_parent": kill_parents,
    "spin": spin,
    "spin_children": spin_children,
    "honest": lambda: None,
    "padded": lambda: None,
}

first = True
for text in sys.stdin:
    turn = json.loads(text)
    if first:
        first = False
        ATTACKS[MODE]()
    pad = "p" * 60000 if MODE == "padded" else ""  # each answer a long line: output in total grows
    print(json.dumps({"action": turn["decision"]["options"][0], "pad": pad}), flush=True)
