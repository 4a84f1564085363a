"""Silently waits for data from somewhere other than its terminal, then
prompts. While it waits it is not waiting for input: nothing typed would be
read.

    python3 read_elsewhere.py fifo PATH   creates the FIFO PATH, reads a line
    python3 read_elsewhere.py udp         binds 127.0.0.1 (prints the port),
                                          reads one datagram
"""

import os
import socket
import sys

mode = sys.argv[1]
if mode == "fifo":
    path = sys.argv[2]
    os.mkfifo(path)
    print("reading the fifo", flush=True)
    with open(path) as f:
        got = f.readline().strip()
elif mode == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    print(f"listening on port {s.getsockname()[1]}", flush=True)
    got = s.recvfrom(256)[0].decode().strip()
else:
    sys.exit(f"unknown mode {mode!r}")
print(f"got {got}", flush=True)
while True:
    try:
        line = input("after> ")
    except EOFError:
        break
    print(f"you said {line}", flush=True)
