#!/bin/bash
set -euo pipefail
# the package runs as a module; a tiny __main__ at the archive's root runs it
stage=$(mktemp -d)
cp -r /app/src/wordstat "$stage/"
printf 'import runpy\nrunpy.run_module("wordstat", run_name="__main__")\n' > "$stage/__main__.py"
mkdir -p /app/dist
python3 -m zipapp "$stage" -p "/usr/bin/env python3" -o /app/dist/wordstat.pyz
chmod +x /app/dist/wordstat.pyz
