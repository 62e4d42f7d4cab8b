#!/usr/bin/env python3
"""Run one revision's own sweep generator (full sweep, single-node) and record points.

Usage: run_rev.py <worktree> <outdir>

Writes into <outdir>:
  cmd.txt        exact full-sweep command line used (relative to worktree root)
  full.json      stdout of that command (all configs at once)
  full.err       stderr of that command
  perkey.json    {key: [entries] | {"error": msg}} from running the same
                 command once per config key with --config-files pointing at a
                 single-key YAML file (written to <outdir>/keys/<key>.yaml)
  check.json     multiset comparison of union(perkey) vs full.json
"""
import contextlib
import glob
import io
import json
import os
import runpy
import subprocess
import sys
import traceback
from collections import Counter

import yaml

wt, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.makedirs(os.path.join(outdir, "keys"), exist_ok=True)

script = None
for cand in ("utils/matrix_logic/generate_sweep_configs.py",
             "utils/matrix-logic/generate_sweep_configs.py"):
    if os.path.exists(os.path.join(wt, cand)):
        script = cand
        break
assert script, "no generator"
cfgdir = "configs" if os.path.exists(os.path.join(wt, "configs/runners.yaml")) else ".github/configs"
masters = sorted(os.path.relpath(p, wt) for p in glob.glob(os.path.join(wt, cfgdir, "*-master.yaml")))
runners = f"{cfgdir}/runners.yaml"
src = open(os.path.join(wt, script)).read()

flags = []
if "'--single-node'" in src or '"--single-node"' in src:
    flags.append("--single-node")
if "'--no-evals'" in src or '"--no-evals"' in src:
    flags.append("--no-evals")


def argv_for(config_files):
    return ["full-sweep", *flags, "--config-files", *config_files, "--runner-config", runners]


full_argv = argv_for(masters)
with open(os.path.join(outdir, "cmd.txt"), "w") as f:
    f.write("python3 " + script + " " + " ".join(full_argv) + "\n")

p = subprocess.run([sys.executable, script, *full_argv], cwd=wt, capture_output=True, text=True)
open(os.path.join(outdir, "full.json"), "w").write(p.stdout)
open(os.path.join(outdir, "full.err"), "w").write(p.stderr + f"\nrc={p.returncode}\n")
full = None
if p.returncode == 0:
    full = json.loads(p.stdout)

# Merge master configs exactly like the generator does (dict update in file order).
merged = {}
for m in masters:
    d = yaml.safe_load(open(os.path.join(wt, m)))
    for k, v in d.items():
        merged[k] = v

os.chdir(wt)
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
perkey = {}
for key, val in merged.items():
    kf = os.path.join(outdir, "keys", key.replace("/", "_") + ".yaml")
    with open(kf, "w") as f:
        yaml.safe_dump({key: val}, f, sort_keys=False)
    sys.argv = [script, *argv_for([kf])]
    buf, ebuf = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(ebuf):
            runpy.run_path(script, run_name="__main__")
        perkey[key] = json.loads(buf.getvalue())
    except SystemExit as e:
        perkey[key] = {"error": f"SystemExit({e.code}): {ebuf.getvalue().strip()[-2000:]}"}
    except Exception as e:
        perkey[key] = {"error": f"{type(e).__name__}: {str(e)[-2000:]}"}

json.dump(perkey, open(os.path.join(outdir, "perkey.json"), "w"))


def canon(e):
    return json.dumps(e, sort_keys=True)


check = {"full_rc": p.returncode}
if full is not None:
    u = Counter()
    for k, v in perkey.items():
        if isinstance(v, list):
            u.update(canon(e) for e in v)
    fc = Counter(canon(e) for e in full)
    check["full_n"] = sum(fc.values())
    check["perkey_n"] = sum(u.values())
    check["only_full"] = sum((fc - u).values())
    check["only_perkey"] = sum((u - fc).values())
    check["equal"] = fc == u
check["keys"] = len(merged)
check["keys_with_points"] = sum(1 for v in perkey.values() if isinstance(v, list) and v)
check["keys_error"] = {k: v["error"][:300] for k, v in perkey.items() if isinstance(v, dict)}
json.dump(check, open(os.path.join(outdir, "check.json"), "w"), indent=1)
print(json.dumps({k: v for k, v in check.items() if k != "keys_error"}), len(check["keys_error"]), "key errors")
