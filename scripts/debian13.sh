#!/usr/bin/env bash
# The Debian 13 root (Python 3.13, tmux) that Terminus-2 and OpenHands run from in every sandbox, and their pinned
# pip installs on its Python (harnesses/debian13.py), built once under polar's cache: about a minute for the root
# (debootstrap from this machine's Debian mirror, as polar's images are made) and one or two for each install; a
# no-op when built. Needs root and debootstrap (scripts/docker.sh installs it).
# Usage: bash scripts/debian13.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "from polar.harnesses.debian13 import main; main()"
