#!/usr/bin/env bash
# Measures perflog binaries on the hostile corpus (testdata/hostile), each
# payload applied to dsr1-fp8-mi355x-sglang on a clone of the real history:
# time, peak memory, whether a secret reached the output, what was created.
# Each command runs under prlimit with 8 GiB of address space (an older
# binary's memory bombs would otherwise take the machine down) and is
# stopped after 120 s.
#
#   bench/hostile.sh [BINARY...]     (default: a build of this tree)
#
# The clone comes from ../shared/corpus/inferencex-v2.bundle (or $BUNDLE).
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${BUNDLE:-../shared/corpus/inferencex-v2.bundle}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then
  CGO_ENABLED=0 go build -o "$work/perflog" ./cmd/perflog
  set -- "$work/perflog"
fi
for bin in "$@"; do
  rm -rf "$work/repo"
  git clone -q -b main "$bundle" "$work/repo"
  echo "## $bin"
  PERFLOG_HOSTILE_BIN=$(realpath "$bin") PERFLOG_HOSTILE_REPO="$work/repo" \
    go test ./cmd/perflog -count=1 -run '^TestHostileMeasure$' -v | grep '^|'
done
