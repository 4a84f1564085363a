"""A full-screen program that redraws on a short timer for ever: curses
halfdelay(5) waits for a key on the terminal with a 0.5 s timeout and
redraws a counter after each, until `q`."""
import curses


def main(w):
    curses.halfdelay(5)
    n = 0
    while True:
        w.addstr(0, 0, f"tick {n}   ")
        w.addstr(1, 0, "press q to quit")
        w.refresh()
        c = w.getch()
        if c == ord("q"):
            break
        if 32 < c < 127:
            w.addstr(2, 0, f"key {chr(c)}   ")
        n += 1


curses.wrapper(main)
