"""Asks, then works through a silent chain of 1 s timers (select on the
terminal with a timeout, as an event loop awaiting a timer does) until a
line comes in on the terminal; prints it and asks again."""
import select
import sys

input("go? ")
while not select.select([sys.stdin], [], [], 1.0)[0]:
    pass
print("got", sys.stdin.readline().strip(), flush=True)
input("again? ")
