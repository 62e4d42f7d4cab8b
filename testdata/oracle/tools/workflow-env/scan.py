import sys, json, re
sys.path.insert(0, '/tmp/wfo/lib')
from chain import *
commits = git('log', '--first-parent', '--reverse', '--format=%H\t%s', 'd57d611^..HEAD').strip().split('\n')
prev = None; rows = []
for line in commits:
    h, s = line.split('\t', 1)
    ch = chain(h)
    sig = signature(ch)
    hs = sighash(sig)
    m = re.search(r'\(#(\d+)\)\s*(\[skip-sweep\])?\s*$', s)
    pr = m.group(1) if m else ''
    if hs != prev:
        changed = []
        if prev is not None:
            for k in sig:
                if json.dumps(sig[k], sort_keys=True, default=str) != json.dumps(prevsig[k], sort_keys=True, default=str):
                    changed.append(k)
        rows.append(dict(commit=h, pr=pr, subj=s, changed=changed, callers=list(ch['callers']), sig=hs))
        print(h[:10], pr, ','.join(changed), '|', s[:80], '|', list(ch['callers']))
    prev = hs; prevsig = sig
json.dump(rows, open('/tmp/wfo/sigchanges.json', 'w'), indent=1)
