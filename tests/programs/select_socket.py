"""Issue 14, family 2: reads a line on its terminal, sends it to a local TCP
server that answers after a delay, then waits for the answer in select() or
poll() on the socket *and* the terminal (a keypress would cancel), as curl
or a chat client does. The server is a process in a session of its own.

    python3 select_socket.py select|poll [DELAY]   (default 0.8 s)

Prompts `sock> `; answers each line with `ANSWER-<line>`.
"""

import os
import select
import socket
import sys
import time

mode = sys.argv[1]
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.8
if mode not in ("select", "poll"):
    sys.exit(f"unknown mode {mode!r}")

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
if os.fork() == 0:
    os.setsid()
    conn, _ = listener.accept()
    f = conn.makefile("rb")
    for line in f:
        time.sleep(delay)
        conn.sendall(b"ANSWER-" + line.strip() + b"\n")
    os._exit(0)
sock = socket.create_connection(listener.getsockname())
listener.close()

while True:
    try:
        line = input("sock> ")
    except EOFError:
        break
    sock.sendall(line.encode() + b"\n")
    if mode == "select":
        ready, _, _ = select.select([sys.stdin, sock], [], [])
        answered = sock in ready
    else:
        p = select.poll()
        p.register(sys.stdin, select.POLLIN)
        p.register(sock, select.POLLIN)
        answered = any(fd == sock.fileno() for fd, _ in p.poll())
    if answered:
        print(sock.recv(1024).decode().strip(), flush=True)
    else:
        print("cancelled", flush=True)
