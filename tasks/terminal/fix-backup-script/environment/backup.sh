#!/bin/bash
# Usage: backup.sh SOURCE_DIR NAME  -> /app/backups/NAME.tar.gz
src=$1
name=$2
dest=/app/backups/$name.tar.gz
mkdir -p /app/backups
cd $src
files=$(find . -type f)
tar -czf $dest $files 2>/dev/null
echo $dest
