"""A queue worker. One queue's handler is broken and spins forever."""

import sys
import time

queue = sys.argv[sys.argv.index("--queue") + 1]
if queue == "reports":
    n = 0
    while True:  # the bug: a busy loop instead of waiting for jobs
        n += 1
while True:
    time.sleep(0.5)
