#!/bin/bash
set -euo pipefail
cat > /app/svc.sh <<'SH'
#!/bin/bash
# Manages /app/daemon.py: start | stop | status.
PIDFILE=/app/daemon.pid

running() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid=$(cat "$PIDFILE")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q daemon.py "/proc/$pid/cmdline" 2>/dev/null
}

case "${1:-}" in
  start)
    if running; then echo "already running"; exit 0; fi
    nohup setsid python3 /app/daemon.py >> /app/daemon.log 2>&1 < /dev/null &
    echo $! > "$PIDFILE"
    ;;
  stop)
    if running; then
      pid=$(cat "$PIDFILE")
      kill "$pid"
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    fi
    rm -f "$PIDFILE"
    ;;
  status)
    if running; then echo running; exit 0; else echo stopped; exit 3; fi
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2; exit 2
    ;;
esac
SH
chmod +x /app/svc.sh
