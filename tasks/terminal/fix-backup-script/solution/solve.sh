#!/bin/bash
set -euo pipefail
cat > /app/backup.sh <<'SH'
#!/bin/bash
# Usage: backup.sh SOURCE_DIR NAME  -> /app/backups/NAME.tar.gz
set -euo pipefail
src=$1
name=$2
dest="/app/backups/$name.tar.gz"
if [ ! -d "$src" ]; then
  echo "no such directory: $src" >&2
  exit 1
fi
mkdir -p /app/backups
tar -czf "$dest" -C "$src" .
echo "$dest"
SH
chmod +x /app/backup.sh
