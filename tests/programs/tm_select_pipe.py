"""Asks a question, then waits for the answer on its terminal and a pipe at
once (select with a 1.9 s timeout); a thread answers through the pipe after
0.2 s. It prints the answer and asks the next question."""
import os
import select
import sys
import threading

r, w = os.pipe()
input("ask? ")
threading.Timer(0.2, lambda: os.write(w, b"forty-two")).start()
ready, _, _ = select.select([sys.stdin, r], [], [], 1.9)
if r in ready:
    print("answer:", os.read(r, 100).decode(), flush=True)
else:
    print("timed out", flush=True)
input("next? ")
