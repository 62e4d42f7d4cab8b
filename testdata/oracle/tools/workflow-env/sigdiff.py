import sys, json, difflib
sys.path.insert(0, '/tmp/wfo/lib')
from chain import *
rows = json.load(open('/tmp/wfo/sigchanges.json'))
prev = None
for r in rows:
    sig = signature(chain(r['commit']))
    txt = json.dumps(sig, indent=1, sort_keys=True, default=str).splitlines()
    if prev:
        print('=' * 20, r['commit'][:10], r['pr'], r['subj'][:70])
        for l in difflib.unified_diff(prev, txt, lineterm='', n=1):
            if l.startswith(('---', '+++')): continue
            print(l)
    prev = txt
