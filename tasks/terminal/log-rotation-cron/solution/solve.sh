#!/bin/bash
set -euo pipefail
cat > /app/rotate.sh <<'SH'
#!/bin/bash
# Keeps three old logs: app.log.1 (newest) to app.log.3 (oldest).
set -euo pipefail
cd /app/logs
rm -f app.log.3
for i in 2 1; do
  if [ -e "app.log.$i" ]; then mv "app.log.$i" "app.log.$((i + 1))"; fi
done
if [ -e app.log ]; then mv app.log app.log.1; fi
: > app.log
SH
chmod +x /app/rotate.sh
echo '*/15 * * * * /app/rotate.sh' > /app/crontab
