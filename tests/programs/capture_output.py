"""Issue 14, family 2: runs a slow command with subprocess.run(...,
capture_output=True) in a process group (and session) of its own, so the
terminal's foreground job is only this program, blocked in poll() on the
command's pipes.

    python3 capture_output.py [DELAY]   (default 0.8 s)

Prompts `capture> `; answers each line with `ANSWER-<line>`.
"""

import subprocess
import sys

delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.8
while True:
    try:
        line = input("capture> ")
    except EOFError:
        break
    r = subprocess.run(
        ["sh", "-c", f'sleep {delay}; echo "ANSWER-$1"', "sh", line.strip()],
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    print(r.stdout.strip(), flush=True)
