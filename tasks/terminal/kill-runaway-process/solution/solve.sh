#!/bin/bash
set -euo pipefail
sleep 2  # let the runaway show up in the CPU figures
pid=$(ps -eo pid=,pcpu=,args= --sort=-pcpu | awk '/worker.py/ {print $1; exit}')
kill "$pid"
echo "$pid" > /app/runaway.pid
