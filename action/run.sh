#!/usr/bin/env bash
# The composite action's step (action.yml): run the gate with workflow
# annotations, write SARIF, and optionally post the report on the PR, with
# the release binary release.sh downloaded (PERFLOG_BIN) or else perflog
# built from the action's own checkout. Tested directly by
# cmd/perflog/action_test.go.
#
# Inputs (environment): PERFLOG_BIN (a release binary, "" to build),
# PERFLOG_SRC (the action's directory), INPUT_ARGS
# (more verify flags), INPUT_SARIF (file to write, "" for none),
# INPUT_COMMENT (true to post the report; needs GITHUB_TOKEN), and
# GITHUB_OUTPUT (where the step's outputs go, when set).
set -uo pipefail
if [ -n "${PERFLOG_BIN:-}" ]; then
  perflog=$PERFLOG_BIN
else
  src=${PERFLOG_SRC:?PERFLOG_SRC must name the perflog source}
  bin=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/perflog-bin
  mkdir -p "$bin"
  perflog=$bin/perflog
  # built once a job (RUNNER_TEMP is the job's)
  if [ ! -x "$perflog" ] && ! (cd "$src" && CGO_ENABLED=0 go build -o "$perflog" ./cmd/perflog); then
    echo "::error title=perflog::could not build perflog from $src" >&2
    exit 2
  fi
fi
read -r -a extra <<<"${INPUT_ARGS:-}"
status=0
"$perflog" changelog verify --format github "${extra[@]}" || status=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$status" >>"$GITHUB_OUTPUT"
fi
if [ "$status" -ge 2 ]; then
  exit "$status" # a runtime error: no report to write
fi
if [ -n "${INPUT_SARIF:-}" ]; then
  "$perflog" changelog verify --format sarif --output "$INPUT_SARIF" "${extra[@]}" >/dev/null || true
fi
if [ "${INPUT_COMMENT:-false}" = true ]; then
  "$perflog" changelog verify --comment --format markdown "${extra[@]}" >/dev/null || true
fi
exit "$status"
