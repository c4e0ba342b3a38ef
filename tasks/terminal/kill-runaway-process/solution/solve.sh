#!/bin/bash
set -euo pipefail
bash /app/start-workers.sh
sleep 2
pid=$(ps -eo pid=,pcpu=,args= --sort=-pcpu | awk '/worker.py/ {print $1; exit}')
kill "$pid"
echo "$pid" > /app/runaway.pid
