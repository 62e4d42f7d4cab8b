import subprocess, json, re, hashlib, os, sys
sys.path.insert(0, os.path.dirname(__file__))
import ghyaml

REPO = '/tmp/wfo/repo'

def git(*a):
    return subprocess.run(['git', '-C', REPO, *a], capture_output=True, text=True, check=True).stdout

def show(commit, path):
    r = subprocess.run(['git', '-C', REPO, 'show', f'{commit}:{path}'], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None

def ls(commit, path):
    return git('ls-tree', '--name-only', commit, path + '/').split()

SN_TMPL = '.github/workflows/benchmark-tmpl.yml'

def find_callers(commit):
    files = ls(commit, '.github/workflows')
    if '.github/workflows/run-sweep.yml' in files:
        return ['.github/workflows/run-sweep.yml']
    return sorted(f for f in files if re.search(r'full-sweep-.*scheduler\.yml$', f))

def launch_step(tmpl):
    for jid, job in (tmpl.get('jobs') or {}).items():
        for st in job.get('steps') or []:
            if 'runners/launch_' in (st.get('run') or ''):
                return jid, job, st
    return None, None, None

def single_node_jobs(caller_doc):
    out = {}
    for jid, job in (caller_doc.get('jobs') or {}).items():
        if (job.get('uses') or '').rstrip() == './' + SN_TMPL:
            out[jid] = job
    return out

def chain(commit):
    tt = show(commit, SN_TMPL)
    if tt is None:
        return None
    tmpl = ghyaml.load(tt)
    jid, job, st = launch_step(tmpl)
    callers = {}
    for c in find_callers(commit):
        doc = ghyaml.load(show(commit, c))
        callers[c] = single_node_jobs(doc)
    return dict(tmpl=tmpl, tmpl_text=tt, job_id=jid, job=job, step=st, callers=callers)

def signature(ch):
    tmpl = ch['tmpl']
    inputs = (tmpl.get('on') or {}).get('workflow_call', {}).get('inputs') or {}
    inputs = {k: {kk: vv for kk, vv in (v or {}).items() if kk != 'description'} for k, v in inputs.items()}
    run = ch['step'].get('run') or ''
    pre = run.split('bash ./runners/launch_')[0]
    sig = dict(inputs=inputs, env=tmpl.get('env'), jobenv=ch['job'].get('env'),
               defaults=tmpl.get('defaults'), jobdefaults=ch['job'].get('defaults'),
               stepenv=ch['step'].get('env'), shell=ch['step'].get('shell'), pre=pre,
               callers={c: {j: jb.get('with') for j, jb in jobs.items()} for c, jobs in ch['callers'].items()})
    return sig

def sighash(sig):
    return hashlib.sha1(json.dumps(sig, sort_keys=True, default=str).encode()).hexdigest()[:12]
