#!/usr/bin/env bash
# Cold-process timing of `perflog changelog verify` on a one-commit PR over
# the real InferenceX history, side by side with the incumbent Python gate:
# the head commit, then the latest commit that changes one benchmark script
# (the full profile dry-runs that recipe's points at base and head).
#
#   bench/verify.sh [CORPUS_CLONE]
#
# Without an argument it clones ../shared/corpus/inferencex.bundle (or, when
# that is absent, the shipped testdata/corpus) into a temp dir. The incumbent
# runs only when ../shared/reference/inferencex-gate and python3 with PyYAML
# and pydantic are present. Needs hyperfine (apt-get install hyperfine).
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
cd "$corpus"
pr=$(git log -1 --format=%s | sed -n 's/.*(#\([0-9]*\)).*/\1/p')
cmds=()
for p in gate strict full; do
  cmds+=("$work/perflog changelog verify --profile $p --base HEAD~1 --head HEAD ${pr:+--pr $pr}")
done
gate="$root/../shared/reference/inferencex-gate/utils"
if [ -d "$gate" ] && python3 -c 'import yaml, pydantic' 2>/dev/null; then
  cp -r "$gate" "$corpus/utils"
  cmds+=("python3 utils/validate_perf_changelog.py --base-ref HEAD~1 --head-ref HEAD")
fi
hyperfine -N --warmup 2 --runs "${RUNS:-20}" "${cmds[@]}"

# a PR that changes one script
for c in $(git log --first-parent --format=%H -n 400); do
  files=$(git diff-tree --no-commit-id --name-only -r "$c")
  if [ "$(echo "$files" | wc -l)" = 2 ] && echo "$files" | grep -q '^perf-changelog.yaml$' &&
    echo "$files" | grep -q '^benchmarks/single_node/.*\.sh$'; then
    break
  fi
done
git checkout -q "$c"
echo
echo "one-script PR: $(git log -1 --format='%h %s')"
cmds=("$work/perflog changelog verify --base HEAD~1 --head HEAD")
[ -d "$corpus/utils" ] && cmds+=("python3 utils/validate_perf_changelog.py --base-ref HEAD~1 --head-ref HEAD")
hyperfine -N --warmup 2 --runs "${RUNS:-20}" "${cmds[@]}"
