"""Issue 14, family 1 (relays): forwards between its terminal and a "remote"
that answers each line after a delay, the way ssh, docker exec or script do.
The relay waits in select() on its terminal *and* the remote's fd, so the
kernel shows it waiting on the terminal while the answer is still on its
way. The remote runs in a session of its own (it is not part of the
terminal's foreground job, as a remote shell is not).

    python3 relay.py socketpair|pipe|pty [DELAY]   (default 0.8 s)

The remote prints `remote> `; each line typed is answered, DELAY seconds
later, with `ANSWER-<line>` and a new prompt.
"""

import os
import pty
import select
import socket
import sys
import termios
import time

mode = sys.argv[1]
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.8


def remote(rfd, wfd):
    os.write(wfd, b"remote> ")
    buf = b""
    while True:
        data = os.read(rfd, 1024)
        if not data:
            os._exit(0)
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            time.sleep(delay)
            os.write(wfd, b"ANSWER-" + line.strip() + b"\nremote> ")


if mode == "socketpair":
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        mine.close()
        remote(theirs.fileno(), theirs.fileno())
    theirs.close()
    to_remote = from_remote = mine.fileno()
elif mode == "pipe":
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.close(down_w)
        os.close(up_r)
        remote(down_r, up_w)
    os.close(down_r)
    os.close(up_w)
    to_remote, from_remote = down_w, up_r
elif mode == "pty":
    pid, master = pty.fork()  # the child is a session leader on a new pty
    if pid == 0:
        attrs = termios.tcgetattr(0)
        attrs[3] &= ~termios.ECHO  # the local terminal echoes already
        termios.tcsetattr(0, termios.TCSANOW, attrs)
        remote(0, 1)
    to_remote = from_remote = master
else:
    sys.exit(f"unknown mode {mode!r}")

while True:
    ready, _, _ = select.select([0, from_remote], [], [])
    if 0 in ready:
        data = os.read(0, 1024)
        if not data:
            break
        os.write(to_remote, data)
    if from_remote in ready:
        try:
            data = os.read(from_remote, 1024)
        except OSError:
            break
        if not data:
            break
        os.write(1, data)
