import json, sys
sys.path.insert(0, '/tmp/wfo/lib')
from main import *
from gen import gen_info, run_gen
report = json.load(open('/tmp/wfo/report.json'))
def pick(points, pred):
    for p in points:
        if is_single_node(p) and pred(p): return p
sel = {
 'fixed dsr1 fp4 mi355x sglang 8k1k tp8 conc4': lambda p: not is_agentic(p) and p.get('precision')=='fp4' and p.get('framework')=='sglang' and p.get('runner')=='mi355x' and p.get('isl')==8192 and p.get('osl')==1024 and p.get('tp')==8 and p.get('conc')==4 and (p.get('exp-name') or '').startswith('dsr1') and p.get('spec-decoding', 'none')=='none',
 'fixed dsr1 fp4 mi355x sglang 1k1k tp8 conc4': lambda p: not is_agentic(p) and p.get('precision')=='fp4' and p.get('framework')=='sglang' and p.get('runner')=='mi355x' and p.get('isl')==1024 and p.get('osl')==1024 and p.get('tp')==8 and p.get('conc')==4 and (p.get('exp-name') or '').startswith('dsr1') and p.get('spec-decoding', 'none')=='none',
 'fixed dsr1 fp4 mi355x sglang 1k8k tp8 conc4': lambda p: not is_agentic(p) and p.get('precision')=='fp4' and p.get('framework')=='sglang' and p.get('runner')=='mi355x' and p.get('isl')==1024 and p.get('osl')==8192 and p.get('tp')==8 and p.get('conc')==4 and (p.get('exp-name') or '').startswith('dsr1') and p.get('spec-decoding', 'none')=='none',
 'agentic offload (dram/cpu)': lambda p: is_agentic(p) and kv_off(p) in ('dram', 'cpu'),
 'agentic none': lambda p: is_agentic(p) and kv_off(p) == 'none',
}
for name, pred in sel.items():
    print('########', name)
    prev = None
    for r in report:
        ch = chain(r['commit']); ch['commit'] = r['commit']
        info = gen_info(r['commit']); pts = run_gen(info, info['masters'])['out']
        p = pick(pts, pred)
        if p is None:
            print(f"  #{r['pr']}: none"); prev = None; continue
        cj = caller_job_for(ch, p, p.get('model-prefix') or p['exp-name'].split('_')[0])
        if cj is None:
            print(f"  #{r['pr']}: no job"); prev=None; continue
        notes = []
        inputs, src = caller_inputs(cj[2], p, ch['tmpl']['on']['workflow_call']['inputs'], notes)
        env, origin, pre, launch = env_for(ch, dict(inputs))
        if prev is None:
            print(f"  #{r['pr']} {r['short']} first ({cj[1]}): " + json.dumps(p))
        else:
            for k in sorted(set(env)|set(prev)):
                if k in ('IMAGE','MODEL'): continue
                if env.get(k) != prev.get(k):
                    print(f"  #{r['pr']} {r['short']}: {k}: {prev.get(k)!r} -> {env.get(k)!r}")
        prev = env
