"""Polls its terminal with select() and a 100 ms timeout, as top does between
redraws, and prints nothing while nothing is typed. Each line typed is
answered with `got LINE`.

    python3 select_stdin.py
"""

import os
import select
import sys

fd = sys.stdin.fileno()
while True:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        data = os.read(fd, 1024)
        if not data:
            break
        print(f"got {data.decode().strip()}", flush=True)
