"""A game loop: the terminal in cbreak mode, a select of no timeout on it
(never blocks), then a 50 ms sleep, for ever; it prints each key."""
import os
import select
import sys
import termios
import time
import tty

old = termios.tcgetattr(0)
tty.setcbreak(0)
try:
    print("press keys, q quits", flush=True)
    while True:
        if select.select([sys.stdin], [], [], 0)[0]:
            c = os.read(0, 1).decode(errors="replace")
            if c == "q":
                break
            if c.isprintable():
                print("key", c, flush=True)
        time.sleep(0.05)
finally:
    termios.tcsetattr(0, termios.TCSADRAIN, old)
