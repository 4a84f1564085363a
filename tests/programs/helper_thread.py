"""Issue 14, family 7 (background work): a helper thread computes for ever
(never sleeping, never printing) while the main thread reads lines from the
terminal. Only the terminal can wake the reader.

    python3 helper_thread.py

Prompts `thread> `; answers each line with `ANSWER-<line>`.
"""

import threading


def compute():
    x = 0
    while True:
        x = (x * 31 + 7) % 1000003


threading.Thread(target=compute, daemon=True).start()
while True:
    try:
        line = input("thread> ")
    except EOFError:
        break
    print(f"ANSWER-{line.strip()}", flush=True)
