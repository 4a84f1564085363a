"""An asyncio program that reads its terminal through the event loop and,
for each line, works through six awaits of 0.4 s before it answers: a silent
chain of timers (2.4 s) on an epoll set that holds the terminal."""
import asyncio
import sys


async def main():
    loop = asyncio.get_running_loop()
    lines = asyncio.Queue()
    loop.add_reader(sys.stdin, lambda: lines.put_nowait(sys.stdin.readline()))
    while True:
        sys.stdout.write("go? ")
        sys.stdout.flush()
        line = await lines.get()
        if not line or line.strip() == "quit":
            break
        for _ in range(6):
            await asyncio.sleep(0.4)
        print("chained", line.strip(), flush=True)


asyncio.run(main())
