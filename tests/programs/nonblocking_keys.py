"""Issue 14, family 7 (background work): polls the keyboard without blocking
(O_NONBLOCK reads of its terminal) and sleeps 50 ms between polls, as games
and simple TUIs do. The kernel shows it sleeping on a timer, never reading
its terminal.

    python3 nonblocking_keys.py

Prompts `poll> `; answers each line with `ANSWER-<line>`.
"""

import fcntl
import os
import sys
import time

flags = fcntl.fcntl(0, fcntl.F_GETFL)
fcntl.fcntl(0, fcntl.F_SETFL, flags | os.O_NONBLOCK)
try:
    os.write(1, b"poll> ")
    buf = b""
    while True:
        try:
            data = os.read(0, 1024)
        except BlockingIOError:
            time.sleep(0.05)
            continue
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            os.write(1, b"ANSWER-" + line.strip() + b"\npoll> ")
finally:
    fcntl.fcntl(0, fcntl.F_SETFL, flags)
