"""A full-screen program that redraws on a 2 s timer for ever: curses
timeout(2000) polls the terminal for a key with a 2 s timeout and redraws
a counter after each, until `q`."""
import curses


def main(w):
    w.timeout(2000)
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
