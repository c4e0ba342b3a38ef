#!/bin/bash
set -euo pipefail
cd /app
sed -i -e '/^\[server\]/,/^\[/ s/^port = .*/port = 8443/' \
       -e '/^\[database\]/,/^\[/ s/^host = .*/host = db.internal/' app.ini
printf '\n[cache]\nttl = 300\n' >> app.ini
