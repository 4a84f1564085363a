"""Issue 14, family 6 (periodic repainters): a full-screen program that
redraws a clock every PERIOD seconds for ever (curses halfdelay: a wait for
a key on the terminal with that timeout), like `watch` or htop. Keys typed
are collected; Enter shows `ANSWER-<keys>`; `q` alone quits.

    python3 curses_clock.py [PERIOD]   (default 1 s)
"""

import curses
import sys
import time

period = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def main(w):
    curses.halfdelay(max(1, min(255, int(period * 10))))
    typed = ""
    while True:
        w.addstr(0, 0, f"clock {time.strftime('%H:%M:%S')}   ")
        w.addstr(1, 0, "type a line, q quits")
        w.refresh()
        c = w.getch()
        if c in (10, 13):
            if typed == "q":
                break
            w.addstr(2, 0, f"ANSWER-{typed}" + " " * 20)
            typed = ""
        elif 32 <= c < 127:
            typed += chr(c)


curses.wrapper(main)
