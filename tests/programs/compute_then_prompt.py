"""Computes silently (a busy loop, no output at all) before every prompt. A
settle that trusts a quiet window returns before the prompt.

    python3 compute_then_prompt.py [SECONDS]   (default 1.5)
"""

import sys
import time

spin = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
n = 0
while True:
    end = time.monotonic() + spin
    x = 0
    while time.monotonic() < end:
        x += 1
    try:
        input(f"computed {n}? ")
    except EOFError:
        break
    n += 1
