"""Prints, sleeps on a timer, prints again, then prompts; every answer starts
another round. A settle that trusts a quiet window returns during the sleep.

    python3 print_sleep_prompt.py [SECONDS]   (default 1.5)
"""

import sys
import time

pause = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
n = 0
while True:
    print(f"working {n}", flush=True)
    time.sleep(pause)
    print(f"done {n}", flush=True)
    try:
        input(f"answer {n}? ")
    except EOFError:
        break
    n += 1
