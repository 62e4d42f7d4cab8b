#!/usr/bin/env bash
# Writes docs/report-overview.png and docs/report-recipe.png: the report of
# the shipped sample (every recipe; dsr1-fp8-mi355x-sglang with its launch
# history) in headless Chromium. Run from anywhere: docs/screenshots.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chromium" ] || { echo "no Chromium installed (apt-get install chromium)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/perflog" ./cmd/perflog)
git clone -q "$root/testdata/corpus/inferencex.git" "$tmp/repo"
cd "$tmp/repo"
"$tmp/perflog" index >/dev/null
# stores the one recipe's launch history in the index, which the full
# report then reads
"$tmp/perflog" report --key dsr1-fp8-mi355x-sglang --launches --out "$tmp/one" 2>/dev/null
"$tmp/perflog" report --out "$tmp/site"
shot() {
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$tmp/profile" \
    --window-size=1280,1500 --screenshot="$root/docs/$1" "file://$tmp/site/$2" >/dev/null 2>&1
  echo "docs/$1"
}
shot report-overview.png index.html
shot report-recipe.png recipes/dsr1-fp8-mi355x-sglang.html
