"""A relay, as ssh is one: forwards each line typed to a far side outside
the terminal's foreground process group (a child in a session of its own),
which answers after a pause, and prints the answer. While the far side
thinks, the program waits on its terminal *and* on the far side.

    python3 ws_relay.py select   the far side on a socketpair; select()
    python3 ws_relay.py poll     the far side on two pipes; poll()
"""

import os
import select
import socket
import sys
import time

# Longer than the default quiet window (500 ms), so that only the relay's
# own window (1 s) waits for the answer; short enough that a loaded machine's
# scheduling delays still fit in the 300 ms left.
PAUSE = 0.7
mode = sys.argv[1]

if mode == "select":
    near, far = socket.socketpair()
    far_in = far_out = far.fileno()
else:
    to_far_r, to_far_w = os.pipe()
    from_far_r, from_far_w = os.pipe()
    far_in, far_out = to_far_r, from_far_w

if os.fork() == 0:
    # The far side: out of the foreground group, as sshd is.
    os.setsid()
    while True:
        line = os.read(far_in, 1024)
        if not line:
            os._exit(0)
        time.sleep(PAUSE)
        os.write(far_out, b"far side says " + line.strip().upper() + b"\n")

if mode == "select":
    far.close()
    send, recv_fd = near.fileno(), near.fileno()
else:
    for fd in (to_far_r, from_far_w):
        os.close(fd)
    send, recv_fd = to_far_w, from_far_r


def prompt():
    sys.stdout.write("relay> ")
    sys.stdout.flush()


prompt()
if mode == "poll":
    p = select.poll()
    p.register(0, select.POLLIN)
    p.register(recv_fd, select.POLLIN)
while True:
    if mode == "select":
        ready, _, _ = select.select([0, recv_fd], [], [])
    else:
        ready = [fd for fd, _ in p.poll()]
    if 0 in ready:
        line = os.read(0, 1024)
        if not line:
            break
        os.write(send, line)
    if recv_fd in ready:
        answer = os.read(recv_fd, 1024)
        if not answer:
            break
        sys.stdout.write(answer.decode())
        prompt()
