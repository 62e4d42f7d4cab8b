import json, sys, re, collections
sys.path.insert(0, '/tmp/wfo/lib')
from main import *
report = json.load(open('/tmp/wfo/report.json'))
res = collections.OrderedDict()
for r in report:
    ch = chain(r['commit'])
    tmpl = ch['tmpl']
    refs = {}
    for k, v in list((tmpl.get('env') or {}).items()) + list((ch['step'].get('env') or {}).items()):
        ins = re.findall(r'inputs\.([A-Za-z0-9_-]+)', str(v))
        # env.X references inherit
        for e in re.findall(r'env\.([A-Za-z0-9_]+)', str(v)):
            ins += refs.get(e, [])
        refs[k] = sorted(set(ins))
    perjob = {}
    for p in r['points']:
        job = p['job']
        d = perjob.setdefault(job, {})
        for var, ins in refs.items():
            for i in ins:
                d.setdefault(var, set()).add(f"{i}:{p['input_src'].get(i, 'undeclared')}")
    out = {}
    for job, d in perjob.items():
        out[job] = {var: sorted(s) for var, s in d.items() if any(not x.endswith(':caller') for x in s)}
    res[f"{r['pr']} {r['short']}"] = out
json.dump(res, open('/tmp/wfo/inputsrc.json','w'), indent=1)
for k, v in res.items():
    print(k)
    for job, d in v.items():
        print('   ', job, '; '.join(f"{var}<-{','.join(s)}" for var, s in sorted(d.items())))
