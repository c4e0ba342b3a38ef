#!/bin/bash
# Starts one worker per queue in the background and notes who is who in /tmp/.workers.
for queue in emails thumbnails reports invoices; do
  nohup setsid python3 /app/worker.py --queue "$queue" > "/tmp/worker-$queue.log" 2>&1 < /dev/null &
  echo "$queue $!" >> /tmp/.workers
done
