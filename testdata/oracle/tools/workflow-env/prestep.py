import sys, json
sys.path.insert(0, '/tmp/wfo/lib')
from chain import *
rows = json.load(open('/tmp/wfo/sigchanges.json'))
extra = ['91208f5', '7dbe791', 'cf55dbe', 'e976e2e']
for c in [r['commit'] for r in rows] + extra:
    ch = chain(c)
    steps = ch['job']['steps']
    names = []
    for st in steps:
        if st is ch['step']: break
        names.append((st.get('name') or st.get('uses')) + (' [ENV!]' if 'GITHUB_ENV' in (st.get('run') or '') or 'GITHUB_PATH' in (st.get('run') or '') else '') + (' [if]' if 'if' in st else ''))
    print(c[:8], list(ch['tmpl']['jobs'].keys()), ch['job'].get('env'), ch['tmpl'].get('defaults'), names, ch['step'].get('shell'), ch['step'].get('if'))
