"""Blocks on a file lock another process holds, then prints and prompts.
The holder (a child in a session of its own, outside the terminal's
foreground group) takes the lock at once and lets it go a while after the
program asks for it.

    python3 ws_lock.py fcntl PATH   lockf (fcntl F_SETLKW)
    python3 ws_lock.py flock PATH   flock without LOCK_NB
"""

import fcntl
import os
import sys
import time

how, path = sys.argv[1], sys.argv[2]
lock = fcntl.lockf if how == "fcntl" else fcntl.flock
held_r, held_w = os.pipe()
go_r, go_w = os.pipe()
if os.fork() == 0:
    os.setsid()
    f = open(path, "w")
    lock(f, fcntl.LOCK_EX)
    os.write(held_w, b"x")
    os.read(go_r, 1)
    time.sleep(1.2)
    os._exit(0)
os.read(held_r, 1)
input("lock> ")
os.write(go_w, b"x")
f = open(path, "w")
lock(f, fcntl.LOCK_EX)
print("got the lock", flush=True)
input("locked> ")
