#!/bin/bash
set -euo pipefail
mkdir -p /app/dist
cd /app/project
git archive --format=tar.gz --prefix=project-1.4.0/ -o /app/dist/project-1.4.0.tar.gz v1.4.0
cd /app/dist
sha256sum project-1.4.0.tar.gz > project-1.4.0.tar.gz.sha256
