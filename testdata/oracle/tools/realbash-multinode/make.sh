#!/bin/bash
# Regenerate everything in /tmp/mnrb/out from the v2 bundle (root; needs unshare/overlayfs).
# AGENTIC=1 bash make.sh: only the multi-node agentic-coding entries (-> real-launch-multinode-agentic.jsonl.gz)
set -e
mkdir -p /tmp/mnrb && cd /tmp/mnrb
[ -d repo ] || git clone -q -b main /work/shared/corpus/inferencex-v2.bundle repo
rm -rf work/tree work/tree_raw
if [ "${AGENTIC:-0}" = 1 ]; then
    python3 tools/gen.py --agentic                                   # generator: full run + once per key (~2 min)
    python3 tools/run_all.py --agentic --timeout 300                 # the recording (~12 x 25 s)
    python3 tools/summary.py --agentic
    exit 0
fi
python3 tools/gen.py                                   # generator: full run + once per key (~2 min)
python3 tools/run_all.py --timeout 300                 # the recording (~15-20 min)
python3 tools/run_all.py --timeout 300 --bundle-modes  # optional: the bundle's file modes (all fail, see README)
python3 tools/summary.py /tmp/mnrb/out/bundle-modes-real-launch-multinode.jsonl.gz
