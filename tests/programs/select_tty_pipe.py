"""Issue 14, family 5 (output while a timer is waited out): on each line,
waits in select() on its terminal and a pipe with a TIMEOUT; a writer (in a
session of its own) answers on the pipe after AT seconds. select() returns
then, the answer is printed and the program prompts again: a settle that
waits the whole TIMEOUT out waits needlessly.

    python3 select_tty_pipe.py [AT] [TIMEOUT]   (default 0.2 s, 1.9 s)

Prompts `pipe> `; answers each line with `ANSWER-<line>` (or `timed out`).
"""

import os
import select
import sys
import time

at = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
timeout = float(sys.argv[2]) if len(sys.argv) > 2 else 1.9
while True:
    try:
        line = input("pipe> ")
    except EOFError:
        break
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.close(r)
        time.sleep(at)
        os.write(w, b"ANSWER-" + line.strip().encode() + b"\n")
        os._exit(0)
    os.close(w)
    ready, _, _ = select.select([0, r], [], [], timeout)
    if r in ready:
        print(os.read(r, 1024).decode().strip(), flush=True)
    else:
        print("timed out", flush=True)
    os.close(r)
    os.waitpid(pid, 0)
