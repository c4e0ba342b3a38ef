#!/bin/bash
set -euo pipefail
cat > /app/upper_server.py <<'PY'
import socketserver


class Upper(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            self.wfile.write(line.rstrip(b"\r\n").upper() + b"\n")


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


Server(("127.0.0.1", 7000), Upper).serve_forever()
PY
nohup setsid python3 /app/upper_server.py > /tmp/upper.log 2>&1 < /dev/null &  # try it once
for _ in $(seq 50); do
  python3 -c 'import socket; socket.create_connection(("127.0.0.1", 7000), 1)' 2>/dev/null && exit 0
  sleep 0.1
done
exit 1
