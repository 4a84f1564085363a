"""Issue 14, family 3 (timer chains) in Python: an asyncio loop with its
terminal registered as a reader; on each line it awaits N sleeps of MS
milliseconds, then answers. Between the sleeps the loop waits in epoll on
the terminal with the sleep's timeout.

    python3 timer_chain_asyncio.py [N] [MS]   (default 6 x 400 ms)

Prompts `aio> `; answers each line with `ANSWER-<line>`.
"""

import asyncio
import os
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
ms = int(sys.argv[2]) if len(sys.argv) > 2 else 400


async def answer(line):
    for _ in range(n):
        await asyncio.sleep(ms / 1000)
    os.write(1, b"ANSWER-" + line + b"\naio> ")


async def main():
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    tasks = set()

    def on_input():
        data = os.read(0, 1024)
        if not data:
            done.set_result(None)
            return
        for line in data.splitlines():
            t = loop.create_task(answer(line.strip()))
            tasks.add(t)
            t.add_done_callback(tasks.discard)

    loop.add_reader(0, on_input)
    os.write(1, b"aio> ")
    await done


asyncio.run(main())
