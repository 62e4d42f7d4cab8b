import json, sys
sys.path.insert(0, '/tmp/wfo/lib')
from main import *

report = json.load(open('/tmp/wfo/report.json'))
head = report[-1]
canon = {}
for p in head['points']:
    if p['index'] == 0: canon['fixed'] = p['point']
    if 'agentic kv-offloading dram' in p['reasons']: canon['agentic-dram'] = p['point']
    if 'agentic with router' in p['reasons']: canon['agentic-none-router'] = p['point']
out = {}
for r in report:
    ch = chain(r['commit']); ch['commit'] = r['commit']
    decl = ch['tmpl']['on']['workflow_call']['inputs']
    for name, pt in canon.items():
        cj = caller_job_for(ch, pt, pt['model-prefix'])
        if cj is None:
            out.setdefault(name, []).append((r['pr'], r['short'], None, None)); continue
        notes = []
        inputs, src = caller_inputs(cj[2], pt, decl, notes)
        env, origin, pre, launch = env_for(ch, dict(inputs))
        out[name].append((r['pr'], r['short'], env, notes)) if name in out else out.setdefault(name, [(r['pr'], r['short'], env, notes)])
json.dump({'canon': canon, 'out': out}, open('/tmp/wfo/eras.json', 'w'), indent=1)
for name, seq in out.items():
    print('########', name, json.dumps(canon[name]))
    prev = None
    for pr, short, env, notes in seq:
        if env is None:
            print(f'  #{pr} {short}: no caller job for this point'); prev = None; continue
        if notes: print(f'  #{pr} notes: {notes}')
        if prev is None:
            print(f'  #{pr} {short}: first: {len(env)} vars')
        else:
            for k in sorted(set(env) | set(prev)):
                a, b = prev.get(k), env.get(k)
                if a != b:
                    print(f'  #{pr} {short}: {k}: {a!r} -> {b!r}')
        prev = env
