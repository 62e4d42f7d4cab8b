#!/usr/bin/env bash
# How much of the changelog's byte contract `perflog changelog fix` repairs
# on real pull requests: for each of the last N first-parent commits of the
# history (each a squashed PR), verify it against its parent; where verify
# reports a byte-contract error, check the commit out, run fix with the PR
# number of its subject, and verify the work tree again.
#
#   bench/fix-history.sh PERFLOG_BINARY [N]      (default N: 200)
#
# Prints one line per commit with such errors: sha, PR, errors before,
# errors after, fix's exit status and its first words; then the totals.
# It works in a temporary clone of the shipped sample (testdata/corpus).
set -euo pipefail
bin=$(realpath "$1")
n=${2:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$root/testdata/corpus/inferencex.git" "$work/ix"
cd "$work/ix"
rules='append-only/not-at-end|format/separator|append-only/history-bytes|format/final-newline|format/trailing-blank|append-only/reformatted'
commits=0 before_all=0 after_all=0 refused=0
for c in $(git rev-list --first-parent -n "$n" main); do
  pr=$(git log -1 --format=%s "$c" | grep -oE '\(#[0-9]+\)$' | tr -dc 0-9 || true)
  [ -z "$pr" ] && continue
  git checkout -q -f "$c"
  before=$("$bin" changelog verify --base "$c~1" --head "$c" --pr "$pr" --offline --claims off 2>/dev/null | grep -cE "^\s+error ($rules)" || true)
  [ "$before" -gt 0 ] || continue
  st=0
  "$bin" changelog fix --base "$c~1" --pr "$pr" --offline >"$work/fix.out" 2>&1 || st=$?
  after=$("$bin" changelog verify --base "$c~1" --worktree --pr "$pr" --offline --claims off 2>/dev/null | grep -cE "^\s+error ($rules)" || true)
  echo "$c #$pr $before $after $st $(head -c 120 "$work/fix.out" | tr '\n' ' ')"
  commits=$((commits + 1)) before_all=$((before_all + before)) after_all=$((after_all + after))
  [ "$st" = 0 ] || refused=$((refused + 1))
done
echo "$commits commits with byte-contract errors: $before_all errors before fix, $after_all after; fix refused $refused"
