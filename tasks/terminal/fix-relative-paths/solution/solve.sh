#!/bin/bash
set -euo pipefail
cat > /app/tools/render.sh <<'SH'
#!/bin/bash
# Usage: render.sh NAME
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
site=$(cat "$here/../data/site.txt")
sed -e "s/{{name}}/$1/" -e "s/{{site}}/$site/" "$here/templates/greeting.tmpl"
SH
chmod +x /app/tools/render.sh
