#!/usr/bin/env python3
"""Run every selected multi-node entry's launch step under real bash in a private
pid+mount namespace with recording stubs, and write /tmp/mnrb/out/real-launch-multinode.jsonl.gz.

Usage: run_all.py [--only IDX,IDX] [--timeout SECS] [--keep] [--agentic]
(--agentic: the agentic-coding entries of gen.py --agentic -> real-launch-multinode-agentic.jsonl.gz)"""
import argparse, gzip, json, os, shutil, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wfenv

TOOLS = os.path.dirname(os.path.abspath(__file__))
WORK = '/tmp/mnrb/work'
OUT = '/tmp/mnrb/out'
TREE = WORK + '/tree'             # HEAD with +x on the one script executed by path (see README)
TREE_RAW = WORK + '/tree_raw'     # HEAD exactly as the bundle stores it (no file has an exec bit)
EXEC_FIX = ['benchmarks/multi_node/amd_utils/server.sh']
STUBS = WORK + '/stubs_host'
CSTUBS = WORK + '/stubs_container'
HARNESS_PATH = '/.rb/stubs:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
DROP = {'PWD', 'SHLVL', '_', 'OLDPWD'}

SERVER_MODS = ('sglang.launch_server', 'atom.entrypoints', 'vllm.entrypoints')
ROUTER_MODS = ('sglang_router',)


def build_inputs():
    for t in (TREE, TREE_RAW):
        if not os.path.isdir(t):
            os.makedirs(t)
            subprocess.run(f'git -C /tmp/mnrb/repo archive HEAD | tar -x -C {t}', shell=True, check=True)
            if t == TREE:
                for f in EXEC_FIX:
                    os.chmod(os.path.join(t, f), 0o755)
    names = {}
    for line in open(f'{TOOLS}/stubs/names.txt'):
        k, _, v = line.partition(':')
        names[k.strip()] = v.split()
    for d, kind, target in ((STUBS, 'host', '.stub.sh'), (CSTUBS, 'container', '/.rb/stubs/.stub.sh')):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for f in ('stub.sh', '.docker', '.slurm', '.task', '.container'):
            shutil.copy2(f'{TOOLS}/stubs/{f}', f'{d}/{".stub.sh" if f == "stub.sh" else f}')
        for n in names[kind]:
            os.symlink(target, f'{d}/{n}')


def parse_records(recdir):
    recs = []
    for fn in os.listdir(recdir):
        if fn.endswith('.tmp'):
            continue
        t, pid, _ = fn.split('.')
        recs.append((int(t), int(pid), fn))
    recs.sort()
    out = []
    for t, pid, fn in recs:
        parts = open(os.path.join(recdir, fn), 'rb').read().decode('utf-8', 'replace').split('\0')
        cmd, cwd, node, rank, where, image, argc = parts[:7]
        argc = int(argc)
        argv = parts[7:7 + argc]
        env = {}
        for item in parts[7 + argc:]:
            if '=' in item:
                k, _, v = item.partition('=')
                env[k] = v
        for k in list(env):
            if k in DROP or (k == 'PATH' and env[k] == HARNESS_PATH) or (k == 'HOME' and env[k] == '/home/runner' and where == 'host'):
                del env[k]
        out.append(dict(cmd=cmd, argv=argv, env=env, cwd=cwd, node=node or None,
                        rank=int(rank) if rank.lstrip('-').isdigit() else None, where=where or None, image=image or None))
    return out


def kind_of(c):
    cmd, a = c['cmd'], c['argv']
    if cmd.startswith('python'):
        i = 0
        while i < len(a) and a[i] in ('-u', '-B', '-E', '-s', '-S', '-O', '-OO', '-q', '-I', '-P'):
            i += 1
        if i < len(a) and a[i] == '-m' and i + 1 < len(a):
            m = a[i + 1]
            if m.startswith(SERVER_MODS):
                return 'server'
            if m.startswith(ROUTER_MODS):
                return 'router'
            if 'bench' in m:
                return 'client'
        elif i < len(a):
            b = os.path.basename(a[i])
            if b in ('benchmark_serving.py', 'bench_serving.py'):
                return 'client'
            if b == 'sync.py':
                return 'barrier'
        return None
    if cmd == 'mooncake_master':
        return 'server'
    if cmd in ('atomesh', 'vllm-router', 'sglang-router'):
        return 'router'
    if cmd in ('lm_eval', 'lm-eval', 'aiperf'):
        return 'client'
    if cmd in ('uv', 'hf'):          # agentic client setup: uv venv/pip, hf dataset download
        return 'agentic-setup'
    if cmd in ('sbatch', 'srun', 'scontrol'):
        return 'slurm'
    if cmd == 'docker' and 'run' in a[:3]:
        return 'docker-run'
    return None


def run_point(slot, L, entry, timeout, tree=TREE):
    S = f'{WORK}/run/slot{slot}'
    subprocess.run(['rm', '-rf', S])
    for d in ('root', 'rec', 'id'):
        os.makedirs(f'{S}/{d}')
    open(f'{S}/id/node', 'w').write(L['runner_name'] + '\n')
    open(f'{S}/id/rank', 'w').write('\n')
    open(f'{S}/id/where', 'w').write('host\n')
    open(f'{S}/workspace', 'w').write(L['env']['GITHUB_WORKSPACE'] + '\n')
    model_name = entry['model'].rsplit('/', 1)[-1]
    # stand-in: the model is staged on the cluster's shared model dir (launcher: MODEL_PATH=/it-share/data)
    open(f'{S}/precreate', 'w').write(f'/it-share/data/{model_name}\n')
    open(f'{S}/shell', 'w').write(L['shell'])
    env = dict(L['env'])
    env['PATH'] = HARNESS_PATH
    env['HOME'] = '/home/runner'
    with open(f'{S}/env0', 'wb') as fh:
        for k, v in env.items():
            fh.write(f'{k}={v}'.encode() + b'\0')
    open(f'{S}/step.sh', 'w').write(L['script'] + '\n')
    cmd = ['timeout', '-k', '5', str(timeout), 'unshare', '-m', '-p', '-f', '--kill-child', '--propagation', 'private',
           f'{TOOLS}/nsinit.sh', S, tree, STUBS, CSTUBS]
    t0 = time.time()
    with open(f'{S}/out', 'wb') as o, open(f'{S}/err', 'wb') as e:
        p = subprocess.run(cmd, stdout=o, stderr=e)
    dt = time.time() - t0
    rc = p.returncode
    timed_out = not os.path.exists(f'{S}/rc')
    calls = parse_records(f'{S}/rec')
    err = open(f'{S}/err', 'rb').read().decode('utf-8', 'replace')
    # exit status of each task of the job's main `srun ... bash -lc` (the per-node docker run)
    node_exits = []
    sd = f'{S}/artifacts/slurm'
    if os.path.isdir(sd):
        for fn in sorted(os.listdir(sd)):
            if fn.startswith('task_cmd.') and open(f'{sd}/{fn}').read().startswith('bash -lc'):
                for line in open(f'{sd}/task_exits.' + fn.split('.', 1)[1]):
                    j, k, node, r = line.rstrip('\n').split('\t')
                    node_exits.append(dict(rank=int(k), node=node, exit=int(r)))
    ws_after = open(f'{S}/ws_after').read().split() if os.path.exists(f'{S}/ws_after') else []
    return dict(exit=rc, timed_out=timed_out, secs=round(dt, 2), calls=calls, stderr=err, ws_after=ws_after, node_exits=node_exits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--only', default='')
    ap.add_argument('--timeout', type=int, default=300)
    ap.add_argument('--out', default='')
    ap.add_argument('--bundle-modes', action='store_true', help='run the tree with the modes the bundle stores (server.sh not executable)')
    ap.add_argument('--agentic', action='store_true', help='the agentic-coding entries (gen.py --agentic)')
    a = ap.parse_args()
    build_inputs()
    C = wfenv.Ctx()
    ents = json.load(open(f'{WORK}/gen/{"entries-agentic.json" if a.agentic else "entries.json"}'))
    only = {int(x) for x in a.only.split(',') if x}
    os.makedirs(OUT, exist_ok=True)
    lines = []
    t_all = time.time()
    for n, x in enumerate(ents):
        if only and n not in only:
            continue
        e = x['entry']
        L = wfenv.launch(C, e)
        res = run_point(0, L, e, a.timeout, TREE_RAW if a.bundle_modes else TREE)
        calls, aux = [], []
        for c in res['calls']:
            k = kind_of(c)
            if k in ('server', 'router', 'client'):
                calls.append(dict(kind=k, cmd=c['cmd'], argv=c['argv'], env=c['env'], rank=c['rank'],
                                  node=c['node'], where=c['where'], cwd=c['cwd'], image=c['image']))
            elif k:
                aux.append(dict(kind=k, cmd=c['cmd'], argv=c['argv'], rank=c['rank'], node=c['node'], where=c['where']))
        results = sorted(f for f in res['ws_after'] if f.endswith('.json'))
        logd = f'{WORK}/logs/{"agentic/" if a.agentic else ""}{"bundle-modes/" if a.bundle_modes else ""}n{n:02d}'
        subprocess.run(['rm', '-rf', logd]); os.makedirs(logd)
        subprocess.run(f'cp -a {WORK}/run/slot0/artifacts/. {WORK}/run/slot0/err {WORK}/run/slot0/out {logd}/ 2>/dev/null', shell=True)
        rec = dict(n=n, key=x['key'], generator_index=x['index'], entry=e,
                   image=e.get('image'), model=e.get('model'), framework=e.get('framework'), precision=e.get('precision'),
                   **{'exp-name': e.get('exp-name'), 'spec-decoding': e.get('spec-decoding')},
                   isl=e.get('isl'), osl=e.get('osl'), prefill=e.get('prefill'), decode=e.get('decode'), conc=e.get('conc'),
                   runner_label=e.get('runner'), runner=L['runner_name'], caller_job=L['caller_job'],
                   launcher_env=L['env'], step_script=L['script'], shell=L['shell'],
                   exit=res['exit'], timed_out=res['timed_out'], secs=res['secs'],
                   stderr_tail=res['stderr'][-3000:], result_files_in_workspace=results, node_exits=res['node_exits'],
                   calls=calls, aux_calls=aux, notes=L['notes'])
        lines.append(rec)
        ks = {}
        for c in calls:
            ks[c['kind']] = ks.get(c['kind'], 0) + 1
        print(f'{n:2d} {x["key"]:45s} exit={res["exit"]} to={res["timed_out"]} {res["secs"]:6.1f}s calls={ks} results={len(results)} node_exits={[x["exit"] for x in res["node_exits"]]}', flush=True)
    name = ('real-launch-multinode-agentic.jsonl.gz' if a.agentic else 'real-launch-multinode.jsonl.gz') if not only else 'partial.jsonl.gz'
    if a.bundle_modes:
        name = 'bundle-modes-' + name
    if a.out:
        name = a.out
    with gzip.open(f'{OUT}/{name}', 'wt') as fh:
        for l in lines:
            fh.write(json.dumps(l) + '\n')
    print(f'total {time.time() - t_all:.0f}s, {len(lines)} entries -> {OUT}/{name}')


if __name__ == '__main__':
    main()
