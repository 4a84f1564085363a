"""A helper thread computes for ever while the main thread asks for names
on the terminal (a plain read: only input can wake it)."""
import threading


def spin():
    n = 0
    while True:
        n += 1


threading.Thread(target=spin, daemon=True).start()
while True:
    name = input("name? ")
    print("hello", name, flush=True)
