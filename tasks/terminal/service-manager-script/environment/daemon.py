"""The service: writes a heartbeat twice a second until it is told to stop (SIGTERM)."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("daemon started", flush=True)
while True:
    with open("/app/heartbeat", "w") as f:
        f.write(f"{time.time()}\n")
    time.sleep(0.5)
