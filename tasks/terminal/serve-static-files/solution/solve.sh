#!/bin/bash
set -euo pipefail
cat > /app/serve.sh <<'SH'
#!/bin/bash
# Serves /app/public on 127.0.0.1:8000 in the background; its pid goes to /app/server.pid.
set -euo pipefail
nohup setsid python3 -m http.server 8000 --bind 127.0.0.1 --directory /app/public > /tmp/http.log 2>&1 < /dev/null &
echo $! > /app/server.pid
# bash's own /dev/tcp probes without starting Python each time, so a loaded machine spends its time on the server;
# a cold page cache under a busy disk has taken more than 10 s to start Python's http.server
while (( SECONDS < 50 )); do
  (exec 3<>/dev/tcp/127.0.0.1/8000) 2>/dev/null && exit 0
  sleep 0.1
done
echo "the server did not start; its log:" >&2; cat /tmp/http.log >&2; exit 1
SH
chmod +x /app/serve.sh
bash /app/serve.sh  # try it once
