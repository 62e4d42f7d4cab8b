#!/usr/bin/env bash
# Timing of perflog report on the real InferenceX history (the targets of
# the report: the whole site ≤ 5 s with a warm index, ≤ 30 s cold, every
# page ≤ 2 MB). Cold is a fresh clone without an index; warm has the index
# with every recipe's launch history (perflog index --launches, timed once:
# it is the report's launch lanes bought in advance).
#
#   bench/report.sh [CORPUS_CLONE]
#
# Without an argument it clones ../shared/corpus/inferencex.bundle (or the
# shipped testdata/corpus). Needs hyperfine and git.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v hyperfine >/dev/null || { echo "hyperfine not found (apt-get install hyperfine)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=${1:-}
if [ -z "$src" ]; then
  src=$root/testdata/corpus/inferencex.git
  [ -f "$root/../shared/corpus/inferencex.bundle" ] && src=$root/../shared/corpus/inferencex.bundle
fi
git clone -q "$src" "$work/cold"
git clone -q "$src" "$work/warm"
CGO_ENABLED=0 go build -o "$work/perflog" "$root/cmd/perflog"
p=$work/perflog
(cd "$work/warm" && /usr/bin/time -f "index --launches: %e s, %M KB peak" "$p" index --launches >/dev/null)
# (the first report with an index fills its claims table, once: the warm-up)
hyperfine -N --runs "${RUNS:-3}" "$p report --repo $work/cold --no-index --out $work/site-cold"
hyperfine -N --warmup 1 --runs "${RUNS:-3}" "$p report --repo $work/warm --out $work/site-warm"
for s in site-cold site-warm; do
  largest=$(find "$work/$s" -name '*.html' -printf '%s %p\n' | sort -rn | awk 'NR == 1')
  echo "$s: $(find "$work/$s" -name '*.html' | wc -l) pages, $(du -sh "$work/$s" | cut -f1), the largest ${largest%% *} bytes (${largest#* })"
done
