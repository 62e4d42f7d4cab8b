"""Oracle: environment a single-node runners/launch_*.sh starts with, per revision."""
import json, os, re, subprocess, sys, tempfile, collections
sys.path.insert(0, os.path.dirname(__file__))
import yaml
from chain import git, chain, find_callers, show, SN_TMPL
from gen import gen_info, run_gen, load_masters, run_single_key, cmdline
import ghyaml
from ghexpr import eval_value, Placeholder, to_str, to_num, realize, ExprError

OUT = '/tmp/wfo'
MAX_POINTS = 12

# ----------------------------------------------------------------- revisions
def pr_of(subject):
    m = re.search(r'\(#(\d+)\)', subject)
    ms = re.findall(r'\(#(\d+)\)', subject)
    return ms[-1] if ms else ''


def revisions():
    rows = json.load(open(f'{OUT}/sigchanges.json'))
    revs = [(r['commit'], r['pr'], 'env-chain change: ' + (','.join(r['changed']) or 'first revision with the sweep generator')) for r in rows]
    log = git('log', '--first-parent', '--format=%H\t%s').strip().split('\n')
    bypr = {}
    for line in log:
        h, s = line.split('\t', 1)
        p = pr_of(s)
        if p and p not in bypr:
            bypr[p] = h
    have = {c for c, _, _ in revs}
    for p in ['1100', '1992', '2096', '2263', '2613', '2707']:
        if p in bypr and bypr[p] not in have:
            revs.append((bypr[p], p, 'requested PR'))
            have.add(bypr[p])
        elif p in bypr:
            revs = [(c, pp, why + ('; requested PR' if c == bypr[p] else '')) for c, pp, why in revs]
    head = git('rev-parse', 'HEAD').strip()
    if head not in have:
        hs = git('log', '-1', '--format=%s', head)
        revs.append((head, pr_of(hs), 'HEAD'))
    else:
        revs = [(c, pp, why + ('; HEAD' if c == head else '')) for c, pp, why in revs]
    order = {h.split('\t')[0]: i for i, h in enumerate(reversed(log))}
    revs.sort(key=lambda r: order[r[0]])
    return revs


# ----------------------------------------------------------------- points
SEQ = {(1024, 1024): '1k1k', (1024, 8192): '1k8k', (8192, 1024): '8k1k'}


def is_single_node(p):
    return p.get('prefill') is None and p.get('decode') is None and 'conc-list' not in p and not isinstance(p.get('conc'), list)


def is_agentic(p):
    return p.get('scenario-type') == 'agentic-coding'


def kv_off(p):
    if 'kv-offloading' in p:
        return p['kv-offloading']
    return p.get('offloading')


def caller_job_for(ch, point, prefix):
    """Return (caller_file, job_id, job) the point is dispatched with, or None."""
    for cfile, jobs in ch['callers'].items():
        if cfile.endswith('run-sweep.yml'):
            if is_agentic(point):
                jid = 'sweep-agentic'
            else:
                jid = 'sweep-single-node-' + SEQ.get((point.get('isl'), point.get('osl')), '?')
            if jid in jobs:
                return cfile, jid, jobs[jid]
            return None
    # scheduler era: one file per sequence length, one job per model prefix
    if is_agentic(point):
        return None
    seq = SEQ.get((point.get('isl'), point.get('osl')))
    for cfile, jobs in ch['callers'].items():
        if f'full-sweep-{seq}-scheduler' not in cfile:
            continue
        doc = ghyaml.load(show(ch['commit'], cfile))
        for jid, job in jobs.items():
            mexpr = str(job['strategy']['matrix']['config'])
            m = re.search(r'needs\.([\w-]+)\.outputs\.([\w-]+)', mexpr)
            gj = doc['jobs'][m.group(1)]
            runs = '\n'.join(st.get('run') or '' for st in gj['steps'])
            lines = [l for l in runs.splitlines() if 'generate_sweep_configs.py' in l]
            if len(lines) > 1:
                lines = [l for l in lines if '--single-node' in l]
            mp = re.search(r'--model-prefix\s+([\w.-]+)', lines[0])
            ms = re.search(r'--seq-lens\s+([\w.-]+)', lines[0])
            if mp and mp.group(1) == prefix and ms and ms.group(1) == seq:
                return cfile, jid, job
    return None


def choose(points, ok):
    cands = [(i, p) for i, p in enumerate(points) if is_single_node(p) and ok(i, p)]
    chosen, why = [], {}

    def add(label, pred):
        if len(chosen) >= MAX_POINTS:
            return
        for i, p in cands:
            if pred(p):
                if i not in chosen:
                    chosen.append(i)
                why.setdefault(i, []).append(label)
                return

    add('agentic kv-offloading dram', lambda p: is_agentic(p) and kv_off(p) == 'dram')
    if not any(is_agentic(p) and kv_off(p) == 'dram' for _, p in cands):
        add('agentic offloading cpu (no dram value in this era)', lambda p: is_agentic(p) and kv_off(p) == 'cpu')
    add('agentic kv-offloading none', lambda p: is_agentic(p) and kv_off(p) == 'none')
    add('agentic with kv-offload-backend', lambda p: is_agentic(p) and p.get('kv-offload-backend'))
    add('agentic with router', lambda p: is_agentic(p) and p.get('router'))
    add('agentic spec-decoding', lambda p: is_agentic(p) and p.get('spec-decoding') not in (None, 'none'))
    add('dp-attn true', lambda p: not is_agentic(p) and p.get('dp-attn') is True)
    add('spec-decoding', lambda p: not is_agentic(p) and p.get('spec-decoding') not in (None, 'none'))
    add('run-eval true', lambda p: p.get('run-eval') is True)
    add('pp/dcp/pcp > 1', lambda p: any((p.get(k) or 1) != 1 for k in ('pp', 'dcp-size', 'pcp-size')))
    for sl in sorted({(p.get('isl'), p.get('osl')) for _, p in cands if not is_agentic(p)}, key=str):
        add(f'seq-len {sl}', lambda p, sl=sl: not is_agentic(p) and (p.get('isl'), p.get('osl')) == sl)
    for fw in list(dict.fromkeys(p.get('framework') for _, p in cands)):
        add(f'framework {fw}', lambda p, fw=fw: p.get('framework') == fw)
    for rn in list(dict.fromkeys(p.get('runner') for _, p in cands)):
        add(f'runner {rn}', lambda p, rn=rn: p.get('runner') == rn)
    chosen.sort()
    return [(i, points[i], why[i]) for i in chosen]


def find_key(info, masters, point):
    """Config key whose own generator output contains exactly this point."""
    cands = []
    for k, lst in masters.items():
        for f, e in lst:
            if not isinstance(e, dict):
                continue
            if all(e.get(fld) == point.get(fld) for fld in ('image', 'model', 'precision', 'framework') if fld in point):
                if 'model-prefix' in point and e.get('model-prefix') not in (None, point['model-prefix']):
                    continue
                cands.append((k, f, e))
    hits = []
    errors = []
    for k, f, e in cands:
        res = run_single_key(info, k, e)
        if 'error' in res:
            errors.append((k, res['error'][-300:]))
            continue
        if point in res['out']:
            hits.append((k, f, e))
    return hits, cands, errors


# ----------------------------------------------------------------- evaluation
def base_ctx():
    return {'runner': Placeholder('runner'), 'secrets': Placeholder('secrets'),
            'github': Placeholder('github'), 'vars': Placeholder('vars'),
            'inputs': {}, 'job': Placeholder('job'), 'strategy': Placeholder('strategy'),
            'steps': Placeholder('steps')}


def caller_inputs(job, point, decl, notes):
    ctx = base_ctx()
    ctx['matrix'] = {'config': point}
    passed = {}
    for k, v in (job.get('with') or {}).items():
        passed[k] = eval_value(v, ctx)
    inputs, src = {}, {}
    for name, d in decl.items():
        d = d or {}
        typ = d.get('type', 'string')
        if name in passed:
            v = passed[name]
            s = 'caller'
        elif 'default' in d:
            v = d['default']
            s = 'default'
        else:
            v = {'boolean': False, 'number': 0}.get(typ, '')
            s = 'type-default'
            if d.get('required'):
                notes.append(f'required input {name} not passed by caller')
        if typ == 'boolean':
            if not isinstance(v, bool):
                notes.append(f'INVALID: input {name} (type boolean) receives {json.dumps(v)} from {s}; GitHub rejects non-boolean values for boolean inputs')
                v = Invalid(name, v)
        elif typ == 'number':
            v = to_num(v)
        else:
            if isinstance(v, (dict, list)):
                notes.append(f'input {name} (string) receives object/array {v!r}')
            v = to_str(v)
        inputs[name] = v
        src[name] = s
    for k in passed:
        if k not in decl:
            notes.append(f'INVALID: caller passes undeclared input {k}')
    return inputs, src


class Invalid:
    def __init__(self, name, v):
        self.name, self.v = name, v

    def text(self):
        return '{invalid: ' + json.dumps(self.v) + ' passed to boolean input ' + self.name + '}'


def env_for(ch, inputs):
    tmpl, job, step = ch['tmpl'], ch['job'], ch['step']
    ctx = base_ctx()
    ins = {}
    for k, v in inputs.items():
        ins[k] = Placeholder(f'invalid: {json.dumps(v.v)} passed to boolean input {k}') if isinstance(v, Invalid) else v
    ctx['inputs'] = ins
    env, origin = {}, {}
    for k, v in (tmpl.get('env') or {}).items():
        env[k] = to_str(eval_value(v, ctx)); origin[k] = 'workflow env'
    ctx['env'] = dict(env)
    for k, v in (job.get('env') or {}).items():
        env[k] = to_str(eval_value(v, ctx)); origin[k] = 'job env'
    ctx['env'] = dict(env)
    for k, v in (step.get('env') or {}).items():
        env[k] = to_str(eval_value(v, ctx)); origin[k] = 'step env'
    run = step['run']
    lines = run.split('\n')
    idx = next(i for i, l in enumerate(lines) if 'bash ./runners/launch_' in l)
    pre = '\n'.join(lines[:idx])
    # substitute ${{ }} in the script text as GitHub does before running it
    pre_sub = eval_value(pre, ctx) if '${{' in pre else pre
    pre_sub = to_str(pre_sub)
    launch_line = to_str(eval_value(lines[idx], ctx)) if '${{' in lines[idx] else lines[idx]
    # The runner exports its runtime contexts (github.* allow-list, runner.*) into
    # the step process AFTER merging workflow/job/step env, so a workflow value
    # for one of those names is overwritten (actions/runner ScriptHandler.RunAsync,
    # "expose context to environment").
    for k in list(env):
        m = re.match(r'^GITHUB_(.+)$', k)
        if m and m.group(1).lower() in GITHUB_RUNTIME:
            env[k] = '{github.' + m.group(1).lower() + '}'
            origin[k] += ' (overridden at runtime by the runner: github.' + m.group(1).lower() + ')'
        m = re.match(r'^RUNNER_(.+)$', k)
        if m and m.group(1).lower() in RUNNER_RUNTIME:
            new = '{runner.' + m.group(1).lower() + '}'
            if env[k] != new:
                origin[k] += ' (overridden at runtime by the runner: runner.' + m.group(1).lower() + ')'
            env[k] = new
    final = run_bash(pre_sub, env, launch_line)
    for k in final:
        if k not in origin:
            origin[k] = 'exported by run script'
        elif final[k] != env.get(k):
            origin[k] += ' (re-exported by run script)'
    return final, origin, pre_sub, launch_line


GITHUB_RUNTIME = {'action_path', 'action_ref', 'action_repository', 'action', 'actor', 'actor_id', 'api_url',
                  'base_ref', 'env', 'event_name', 'event_path', 'graphql_url', 'head_ref', 'job', 'output', 'path',
                  'ref_name', 'ref_protected', 'ref_type', 'ref', 'repository', 'repository_id', 'repository_owner',
                  'repository_owner_id', 'retention_days', 'run_attempt', 'run_id', 'run_number', 'server_url', 'sha',
                  'state', 'step_summary', 'triggering_actor', 'workflow', 'workflow_ref', 'workflow_sha', 'workspace'}
# string keys of the runner context (docs: runner.name/os/arch/temp/tool_cache/debug/environment; workspace is set too)
RUNNER_RUNTIME = {'name', 'os', 'arch', 'temp', 'tool_cache', 'debug', 'environment', 'workspace'}
INFRA = {'PATH', 'GITHUB_ENV', 'HOME', 'PWD', 'SHLVL', '_', 'OLDPWD'}


def run_bash(pre, env, launch_line):
    with tempfile.TemporaryDirectory(prefix='wfo_bash_') as d:
        ghenv = os.path.join(d, 'github_env')
        open(ghenv, 'w').close()
        # replace the launcher invocation with a dump of the environment the
        # launcher (a child process) would inherit
        dump = os.path.join(d, 'env.bin')
        script = pre + '\n' + f'env -0 > {dump}\n'
        sp = os.path.join(d, 'step.sh')
        open(sp, 'w').write(script)
        base = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'GITHUB_ENV': ghenv, 'HOME': d}
        full = dict(base)
        full.update(env)
        r = subprocess.run(['bash', '--noprofile', '--norc', '-eo', 'pipefail', sp], env=full, cwd=d,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f'bash failed: {r.stderr}')
        raw = open(dump, 'rb').read().decode()
        out = {}
        for item in raw.split('\0'):
            if not item:
                continue
            k, _, v = item.partition('=')
            out[k] = v
    for k in list(out):
        if k in INFRA and k not in env:
            del out[k]
        elif k in base and k not in env:
            del out[k]
    return out


def esc(s):
    return s.replace('\t', '\\t').replace('\n', '\\n').replace('\r', '\\r')
