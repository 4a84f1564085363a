"""An install wizard for the agent task bench (bench/tasks.py): a password
read with getpass (no echo), a y/n question, then a progress bar redrawn with
carriage returns while it sleeps, then a last line. Writes the password's
SHA-256 to OUT so that the bench can check what was typed.

    python3 tb_installer.py OUT
"""

import getpass
import hashlib
import sys
import time

out = sys.argv[1]
print("Demo installer 1.0", flush=True)
password = getpass.getpass("Admin password: ")
answer = input("Install demo to /opt/demo? [y/n] ").strip().lower()
if answer != "y":
    print("Aborted.", flush=True)
    sys.exit(1)
print("Preparing...", flush=True)
time.sleep(0.4)
for i in range(1, 21):
    sys.stdout.write(f"\rInstalling {i * 5:3d}% [{'#' * i}{'.' * (20 - i)}]")
    sys.stdout.flush()
    time.sleep(0.05)
print(flush=True)
with open(out, "w") as f:
    f.write(hashlib.sha256(password.encode()).hexdigest() + "\n")
print("Installed demo.", flush=True)
