#!/usr/bin/env bash
# Cold-process timing of the history commands on the real InferenceX
# history, side by side with git's line blame of the same files (the
# performance targets: audit ≤ git blame perf-changelog.yaml, blame of a
# key's config fields ≤ git blame of its master config; with its launch
# fields, which dry-run its history, ≤ 2 s cold).
#
#   bench/history.sh [CORPUS_CLONE]
#
# Without an argument it clones ../shared/corpus/inferencex.bundle (or,
# when that is absent, the shipped testdata/corpus) into a temp dir. A
# fresh clone has no commit-graph, like a CI checkout. Needs hyperfine and
# git (apt-get install hyperfine git).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v hyperfine >/dev/null || { echo "hyperfine not found (apt-get install hyperfine)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus=${1:-}
if [ -z "$corpus" ]; then
  corpus=$work/ix
  if [ -f "$root/../shared/corpus/inferencex.bundle" ]; then
    git clone -q -b main "$root/../shared/corpus/inferencex.bundle" "$corpus"
  else
    git clone -q "$root/testdata/corpus/inferencex.git" "$corpus"
  fi
fi
CGO_ENABLED=0 go build -o "$work/perflog" "$root/cmd/perflog" # static, as README's install
p=$work/perflog
cd "$corpus"
amd=${AMD_KEY:-dsr1-fp4-mi355x-sglang}          # one of the oldest recipes: the longest walk
nv=${NV_KEY:-dsv4-fp4-b200-vllm-agentic-mtp}
hyperfine -N --warmup 2 --runs "${RUNS:-10}" \
  "$p changelog audit" "git blame perf-changelog.yaml" \
  "$p provenance blame $amd --no-launch" "git blame configs/amd-master.yaml" \
  "$p provenance blame $nv --no-launch" "git blame configs/nvidia-master.yaml" \
  "$p provenance blame $amd" "$p provenance blame $nv" \
  "$p provenance log $amd --no-launch"
echo
echo "peak RSS (/usr/bin/time -v):"
for c in "changelog audit" "provenance blame $amd" "provenance log $amd"; do
  /usr/bin/time -f "  perflog $c: %M KB" $p $c >/dev/null 2>"$work/t" || true
  tail -1 "$work/t"
done
