"""Per revision: the single-node points (from /tmp/gen) and, per point, the launch
step's environment + run text (via /tmp/wfo/lib), with placeholders replaced by
fixed stand-ins."""
import json, os, re, sys, subprocess
sys.path.insert(0, '/tmp/wfo/lib')
import chain as wchain
wchain.REPO = '/tmp/rb/repo'
from chain import chain
import main as wmain
from main import caller_job_for, caller_inputs, Invalid, base_ctx, GITHUB_RUNTIME, RUNNER_RUNTIME, is_agentic
from ghexpr import eval_value, Placeholder, to_str
import yaml

GEN = '/tmp/gen'
WS = '/runner/_work/InferenceX/InferenceX'   # stand-in GITHUB_WORKSPACE
RUNNER_TEMP = '/runner/_work/_temp'
STEP_SUMMARY = RUNNER_TEMP + '/_runner_file_commands/step_summary_0'
GITHUB_ENV_FILE = RUNNER_TEMP + '/_runner_file_commands/set_env_0'

# variables the Actions runner itself puts into every step's process (stand-ins)
RUNNER_DEFAULTS = {
    'GITHUB_WORKSPACE': WS,
    'GITHUB_ACTIONS': 'true',
    'CI': 'true',
    'RUNNER_TEMP': RUNNER_TEMP,
    'GITHUB_ENV': GITHUB_ENV_FILE,
    'USER': 'runner',
}


def revisions():
    out = []
    for line in open(f'{GEN}/revisions.tsv'):
        idx, sha, pr, mon, why, subj = line.rstrip('\n').split('\t')
        d = f'{GEN}/out/{int(idx):04d}_{sha[:7]}'
        chk = json.load(open(d + '/check.json'))
        if chk.get('full_rc') != 0:
            continue
        out.append(dict(idx=int(idx), sha=sha, pr=int(pr), dir=d, subject=subj))
    return out


def s(v):
    if v is None:
        return ''
    if isinstance(v, bool):
        return 'true' if v else 'false'
    return str(v)


def point_fields(e):
    if 'kv-offloading' in e:
        kvo = e['kv-offloading']
    elif 'offloading' in e:
        kvo = e['offloading']
    else:
        kvo = None
    b = e.get('kv-offload-backend')
    if isinstance(b, dict):
        b = b.get('name')
    return dict(scenario=e.get('scenario-type', 'fixed-seq-len'), isl=s(e.get('isl')), osl=s(e.get('osl')),
                tp=s(e['tp']), ep=s(e.get('ep')), dp_attn=s(e.get('dp-attn')), conc=s(e['conc']),
                spec=s(e.get('spec-decoding', 'none')), kv_offloading=s(kvo), kv_backend=s(b),
                runner=s(e.get('runner')))


def points(rev):
    perkey = json.load(open(rev['dir'] + '/perkey.json'))
    out = []
    for k in sorted(perkey):
        v = perkey[k]
        if not isinstance(v, list):
            continue
        for e in v:
            if 'prefill' in e or 'decode' in e:
                continue
            out.append((k, e))
    return out


def runner_nodes(commit):
    for p in ('configs/runners.yaml', '.github/configs/runners.yaml'):
        t = wchain.show(commit, p)
        if t:
            d = yaml.safe_load(t)
            return d.get('labels', d) if isinstance(d, dict) else {}
    return {}


class RevEnv:
    def __init__(self, rev):
        self.rev = rev
        self.commit = rev['sha']
        ch = chain(self.commit)
        ch['commit'] = self.commit
        self.ch = ch
        self.decl = ch['tmpl']['on']['workflow_call']['inputs']
        self.nodes = runner_nodes(self.commit)
        self._fallback_job = {}

    def node_for(self, label):
        lst = self.nodes.get(label) if isinstance(self.nodes, dict) else None
        if isinstance(lst, list) and lst:
            return str(lst[0]), 'first node of label in runners.yaml'
        return label.split(':', 1)[-1] + '_0', 'label not in runners.yaml: label (without cluster:) + _0'

    def job_for(self, p):
        prefix = p.get('model-prefix') or (p.get('exp-name') or '').split('_')[0]
        cj = caller_job_for(self.ch, p, prefix)
        if cj:
            return cj, ''
        # no caller job for this point in the full sweep: use a job of the same shape
        for cfile, jobs in self.ch['callers'].items():
            for jid, job in jobs.items():
                seq = wmain.SEQ.get((p.get('isl'), p.get('osl')))
                if is_agentic(p):
                    if 'agentic' in jid:
                        return (cfile, jid, job), f'no caller job for this point; used {jid}'
                elif seq and (seq in jid or seq in cfile):
                    return (cfile, jid, job), f'no caller job for this point; used {cfile}:{jid}'
        cfile = next(iter(self.ch['callers']))
        jid, job = next(iter(self.ch['callers'][cfile].items()))
        return (cfile, jid, job), f'no caller job for this point; used {cfile}:{jid}'

    def launch(self, p):
        """-> dict(env=..., script=..., node=..., note=...)"""
        (cfile, jid, job), note = self.job_for(p)
        notes = []
        inputs, src = caller_inputs(job, p, self.decl, notes)
        tmpl, jb, step = self.ch['tmpl'], self.ch['job'], self.ch['step']
        ctx = base_ctx()
        ins = {}
        for k, v in inputs.items():
            ins[k] = Placeholder(f'invalid: {json.dumps(v.v)} passed to boolean input {k}') if isinstance(v, Invalid) else v
        ctx['inputs'] = ins
        env = {}
        for k, v in (tmpl.get('env') or {}).items():
            env[k] = to_str(eval_value(v, ctx))
        ctx['env'] = dict(env)
        for k, v in (jb.get('env') or {}).items():
            env[k] = to_str(eval_value(v, ctx))
        ctx['env'] = dict(env)
        for k, v in (step.get('env') or {}).items():
            env[k] = to_str(eval_value(v, ctx))
        for k in list(env):
            m = re.match(r'^GITHUB_(.+)$', k)
            if m and m.group(1).lower() in GITHUB_RUNTIME:
                env[k] = '{github.' + m.group(1).lower() + '}'
            m = re.match(r'^RUNNER_(.+)$', k)
            if m and m.group(1).lower() in RUNNER_RUNTIME:
                env[k] = '{runner.' + m.group(1).lower() + '}'
        lines = step['run'].split('\n')
        idx = next(i for i, l in enumerate(lines) if 'bash ./runners/launch_' in l)
        text = '\n'.join(lines[:idx + 1])
        text = to_str(eval_value(text, ctx)) if '${{' in text else text
        node, nwhy = self.node_for(p.get('runner'))

        def sub(x):
            x = x.replace('{runner.name}', node)
            x = x.replace('{github.step_summary}', STEP_SUMMARY)
            x = x.replace('{github.workspace}', WS)
            x = re.sub(r'\{secrets\.([A-Za-z0-9_]+)\}', lambda m: 'SECRET_' + m.group(1), x)
            x = re.sub(r'\{github\.([a-z_]+)\}', lambda m: 'GITHUB_' + m.group(1).upper(), x)
            x = re.sub(r'\{runner\.([a-z_]+)\}', lambda m: 'RUNNER_' + m.group(1).upper(), x)
            return x
        env = {k: sub(v) for k, v in env.items()}
        full = dict(RUNNER_DEFAULTS)
        full.update(env)
        if nwhy.startswith('label not'):
            notes.append(f'runner label {p.get("runner")} has no runner in runners.yaml; used {node}')
        return dict(env=full, script=sub(text), node=node, job=f'{cfile}:{jid}',
                    note='; '.join([n for n in [note] + notes if n]))
