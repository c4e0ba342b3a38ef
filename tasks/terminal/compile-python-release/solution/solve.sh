#!/bin/bash
set -euo pipefail
rm -rf /app/build
cp -r /app/app /app/build
python3 -m compileall -q -b /app/build
find /app/build -name '*.py' -delete
find /app/build -name __pycache__ -type d -exec rm -rf {} +
