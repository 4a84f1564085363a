"""Prints, polls its terminal for a moment (select() with a timeout, as a
program checking for a keypress between two pieces of work does), prints
again, then prompts; every answer starts another round. While it polls, the
kernel shows it waiting on the terminal, though it will wake by itself.

    python3 select_pause_prompt.py [SECONDS]   (default 0.0018)
"""

import select
import sys

pause = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0018
fd = sys.stdin.fileno()
n = 0
while True:
    print(f"polling {n}", flush=True)
    select.select([fd], [], [], pause)
    print(f"done {n}", flush=True)
    try:
        input(f"answer {n}? ")
    except EOFError:
        break
    n += 1
