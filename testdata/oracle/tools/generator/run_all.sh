#!/bin/bash
cd /tmp/gen
while IFS=$'\t' read -r idx sha pr mon why subj; do
  d=out/$(printf %04d $idx)_${sha:0:7}
  [ -f $d/check.json ] && continue
  git -C wt checkout -q --detach -f $sha && git -C wt clean -qfdx
  echo "== $idx $sha $pr"; python3 run_rev.py /tmp/gen/wt $d
done < revisions.tsv
