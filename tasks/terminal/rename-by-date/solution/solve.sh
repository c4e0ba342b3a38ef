#!/bin/bash
set -euo pipefail
cd /app/photos
for f in IMG_*.jpg; do
  stamp=${f#IMG_}; stamp=${stamp%.jpg}
  day=${stamp%_*}; time=${stamp#*_}
  dest="/app/sorted/${day:0:4}/${day:4:2}"
  mkdir -p "$dest"
  mv -- "$f" "$dest/${day:6:2}_${time}.jpg"
done
