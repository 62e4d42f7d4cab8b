#!/usr/bin/env python3
"""Record what the incumbent's resolve-conflict does with each case here.

Each case (NAME.txtar) holds the three stages of a conflicted
perf-changelog.yaml: base (the merge base), pr (the PR's side) and main,
and a "pr: N" line in its comment. This script runs the incumbent's
resolve_conflict_bytes on them and writes its answer into the case, as a
"want" section (the bytes it produced) or a "refused" section (its
message). The Go test (changelog/merge_test.go) compares perflog's merge
with them, without Python.

    python3 changelog/testdata/merge/record.py ../shared/reference/inferencex-gate/utils
"""

import pathlib
import re
import sys

sys.path.insert(0, sys.argv[1])
from prepare_perf_changelog_merge import resolve_conflict_bytes  # noqa: E402
from validate_perf_changelog import ChangelogValidationError  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def sections(text):
    parts = re.split(r"^-- (\S+) --\n", text, flags=re.M)
    comment, rest = parts[0], parts[1:]
    return comment, {rest[i]: rest[i + 1] for i in range(0, len(rest), 2)}


for path in sorted(HERE.glob("*.txtar")):
    comment, secs = sections(path.read_text())
    pr = int(re.search(r"^pr: (\d+)$", comment, flags=re.M).group(1))
    try:
        out = resolve_conflict_bytes(secs["base"].encode(), secs["pr"].encode(), secs["main"].encode(), pr,
                                     "SemiAnalysisAI/InferenceX")
        answer = ("want", out.decode())
    except ChangelogValidationError as e:
        answer = ("refused", str(e) + "\n")
    with path.open("w") as f:
        f.write(comment)
        for name in ("base", "pr", "main"):
            f.write(f"-- {name} --\n{secs[name]}")
        f.write(f"-- {answer[0]} --\n{answer[1]}")
    print(path.name, answer[0])
