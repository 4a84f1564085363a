"""Issue 14, family 4 (locks): on each line, another process (in a session of
its own) takes a lock on a file and holds it for HOLD seconds; this program
then blocks taking the same lock (fcntl F_SETLKW through lockf(), or
flock()), and answers once it has it.

    python3 lock_wait.py lockf|flock [HOLD]   (default 1.5 s)

Prompts `lock> `; answers each line with `ANSWER-<line>`.
"""

import fcntl
import os
import sys
import tempfile
import time

mode = sys.argv[1]
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
take = {"lockf": fcntl.lockf, "flock": fcntl.flock}.get(mode)
if take is None:
    sys.exit(f"unknown mode {mode!r}")
fd, path = tempfile.mkstemp(prefix="lock_wait-")
os.close(fd)
try:
    while True:
        try:
            line = input("lock> ")
        except EOFError:
            break
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.setsid()
            with open(path, "w") as f:
                take(f, fcntl.LOCK_EX)
                os.write(ready_w, b"x")
                time.sleep(hold)
            os._exit(0)
        os.close(ready_w)
        os.read(ready_r, 1)
        os.close(ready_r)
        with open(path, "w") as f:
            take(f, fcntl.LOCK_EX)
            take(f, fcntl.LOCK_UN)
        os.waitpid(pid, 0)
        print(f"ANSWER-{line.strip()}", flush=True)
finally:
    os.unlink(path)
