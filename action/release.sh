#!/usr/bin/env bash
# The action's first step (action.yml): when the action is used at a
# release tag (uses: perflog/perflog@v1.2.3), download that release's
# perflog for this runner and check it against the release's
# checksums.txt; it then runs in seconds, without Go. At any other ref (a
# branch, a commit) there is no release to take: the action builds perflog
# from its checkout (run.sh), as it does when a release has no archive for
# this platform. An archive whose checksum does not match is an error,
# never run. Tested by cmd/perflog/action_test.go.
#
# Inputs (environment): ACTION_REF and ACTION_REPOSITORY (github.action_ref
# and github.action_repository), RUNNER_TEMP, GITHUB_OUTPUT (bin=PATH of
# the binary, or bin= to build), and PERFLOG_RELEASE_BASE (tests: where
# releases are downloaded from instead of https://github.com).
set -uo pipefail
out=${GITHUB_OUTPUT:-/dev/stdout}
ref=${ACTION_REF:-}
if [[ ! $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "bin=" >>"$out" # not a release tag: built from the checkout
  exit 0
fi
repo=${ACTION_REPOSITORY:?ACTION_REPOSITORY must name the repository of the action}
case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) os= ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch= ;;
esac
if [ -z "$os" ] || [ -z "$arch" ]; then
  echo "::warning title=perflog::no release binary for $(uname -s) $(uname -m); building perflog from source"
  echo "bin=" >>"$out"
  exit 0
fi
archive="perflog_${ref#v}_${os}_${arch}.tar.gz"
base="${PERFLOG_RELEASE_BASE:-https://github.com}/$repo/releases/download/$ref"
dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/perflog-release"
rm -rf "$dir" && mkdir -p "$dir"
fetch() { curl -fsSL --retry 3 --connect-timeout 20 -o "$dir/$1" "$base/$1"; }
if ! fetch checksums.txt || ! fetch "$archive"; then
  echo "::warning title=perflog::could not download $archive of $repo $ref; building perflog from source"
  echo "bin=" >>"$out"
  exit 0
fi
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$dir/checksums.txt")
if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$dir/$archive" | awk '{ print $1 }')
else
  got=$(shasum -a 256 "$dir/$archive" | awk '{ print $1 }')
fi
if [ -z "$want" ] || [ "$want" != "$got" ]; then
  echo "::error title=perflog::$archive of $repo $ref does not match its checksum in checksums.txt (want ${want:-none}, got $got); not running it" >&2
  exit 2
fi
if ! tar -xzf "$dir/$archive" -C "$dir" perflog || [ ! -x "$dir/perflog" ]; then
  echo "::error title=perflog::$archive holds no perflog binary" >&2
  exit 2
fi
echo "bin=$dir/perflog" >>"$out"
