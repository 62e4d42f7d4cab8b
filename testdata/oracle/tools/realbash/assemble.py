#!/usr/bin/env python3
"""Build /tmp/rb/out/real-launch.jsonl.gz (+ stats json) from /tmp/rb/work."""
import os, sys, json, gzip, glob, re, collections
sys.path.insert(0, '/tmp/rb/lib')
import envs

WORK = '/tmp/rb/work'
OUT = '/tmp/rb/out'


def num(v):
    return int(v) if re.fullmatch(r'-?\d+', v or '') else v


def classify(rec):
    if rec.get('harness_error'):
        return 'harness error'
    if rec['timed_out']:
        return 'timeout'
    t = rec.get('stderr_tail') or ''
    lines = [l for l in t.splitlines() if l.strip() and not l.startswith('+')]
    if re.search(r'apply_\w*container_patches\.sh', t):
        return 'script patches the real container image (apply_*_container_patches.sh) and fails without it'
    if 'required environment variables are not set' in (rec.get('stdout_tail') or '') + t:
        return 'check_env_vars: a required variable is not passed into the container'
    for l in reversed(lines):
        if re.search(r'runners/launch_\S+\.sh: No such file', l):
            return 'launcher script missing for the runner node (runners/launch_<node>.sh)'
        if re.search(r'benchmarks/\S+: No such file', l) or re.search(r'bash: benchmarks/\S+\.sh: No such file', l):
            return 'benchmark script named by the launcher does not exist'
        if re.search(r"sed: can't read (/sgl-workspace|/usr|/opt|/workspace/sglang|/app)", l):
            return 'script edits a file that only exists inside the real container image'
        if re.search(r'benchmark_lib.sh: No such file', l):
            return 'benchmark_lib.sh path does not exist'
        if 'cp: cannot stat' in l:
            return 'cp of a file a real download/clone would have produced'
    if not lines:
        lines = [l for l in (rec.get('stdout_tail') or '').splitlines() if l.strip() and not l.startswith('+')]
    for l in reversed(lines):
        s = re.sub(r'\d+', 'N', l.strip())[:140]
        if s:
            return 'other: ' + s
    return f'other: exit {rec["exit"]}'


def main():
    os.makedirs(OUT, exist_ok=True)
    revs = sorted(envs.revisions(), key=lambda r: r['pr'])
    stats = {}
    tmp = f'{OUT}/real-launch.jsonl.gz.tmp'
    nlines = 0
    with gzip.open(tmp, 'wt', compresslevel=9) as fh:
        for r in revs:
            d = f'{WORK}/{r["pr"]}'
            if not os.path.isdir(d):
                continue
            bykey = collections.defaultdict(list)
            for f in glob.glob(f'{d}/*.jsonl.gz'):
                key = os.path.basename(f).rsplit('.', 3)[0]
                for l in gzip.open(f, 'rt'):
                    bykey[key].append(json.loads(l))
            if not bykey:
                continue
            total = len(envs.points(r))
            st = dict(pr=r['pr'], commit=r['sha'][:10], points_total=total, keys_total=len({k for k, _ in envs.points(r)}),
                      points_run=0, keys_run=len(bykey), exit0=0, nonzero=0, timeouts=0, causes=collections.Counter(),
                      phases=collections.Counter())
            for key in sorted(bykey):
                recs = sorted(bykey[key], key=lambda x: x['idx'])
                prev = {}
                for rec in recs:
                    p = rec['point']
                    if rec['exit'] in (124, 137) and 'Terminated' in (rec.get('stderr_tail') or ''):
                        rec['timed_out'] = True   # killed by the 20 s timeout
                    calls = []
                    cur = {}
                    for c in rec['calls']:
                        full = dict(cur)
                        full.update(c['env'])
                        for k in c.get('env_unset', []):
                            full.pop(k, None)
                        cur = full
                        de = {k: v for k, v in full.items() if prev.get(k) != v}
                        un = sorted(k for k in prev if k not in full)
                        cc = dict(cmd=c['cmd'], argv=c['argv'], env=de, cwd=c['cwd'])
                        if un:
                            cc['env_unset'] = un
                        calls.append(cc)
                        prev = full
                    err = ''
                    if rec['exit'] != 0 or rec['timed_out']:
                        err = classify(rec)
                    line = dict(pr=r['pr'], commit=r['sha'][:10], key=key, scenario=p['scenario'],
                                isl=num(p['isl']), osl=num(p['osl']), tp=num(p['tp']), ep=num(p['ep']),
                                dp_attn=(p['dp_attn'] == 'true') if p['dp_attn'] in ('true', 'false') else p['dp_attn'],
                                conc=num(p['conc']), spec=p['spec'], kv_offloading=p['kv_offloading'],
                                kv_backend=p['kv_backend'], runner=p['runner'], exit=rec['exit'],
                                timed_out=rec['timed_out'], error=err)
                    if err:
                        line['stderr_tail'] = (rec.get('stderr_tail') or rec.get('harness_error') or '')[-800:]
                    line['node'] = rec.get('node', '')
                    if rec.get('note'):
                        line['note'] = rec['note']
                    line['calls'] = calls
                    fh.write(json.dumps(line, separators=(',', ':')) + '\n')
                    nlines += 1
                    st['points_run'] += 1
                    if rec['exit'] == 0 and not rec['timed_out']:
                        st['exit0'] += 1
                    else:
                        st['nonzero'] += 1
                        st['causes'][err] += 1
                    if rec['timed_out']:
                        st['timeouts'] += 1
            for f in glob.glob(f'{d}/*.jsonl.gz'):
                ph = os.path.basename(f).rsplit('.', 3)[1]
                st['phases'][ph] += 1
            stats[r['pr']] = st
    os.replace(tmp, f'{OUT}/real-launch.jsonl.gz')
    json.dump(stats, open(f'{OUT}/stats.json', 'w'), indent=1, default=dict)
    print(nlines, 'lines', os.path.getsize(f'{OUT}/real-launch.jsonl.gz'), 'bytes')


if __name__ == '__main__':
    main()
