#!/usr/bin/env python3
"""Drive the harness over all revisions in /tmp/gen.

Work units are (revision, key, phase). Results go to /tmp/rb/work/<pr>/<key>.<phase>.jsonl.gz
(one line per point; calls with env delta-encoded against the previous call of the same point,
the first call of the point full). assemble.py builds the deliverable from them.

Phases:  A = every point of HEAD (#2707)
         B = every other revision: the first point (generator order) of every key
         C = every other revision: per key, further points until every value of every non-conc
             point field (seq/scenario, tp, ep, dp-attn, spec, kv-offloading, kv-backend) is covered
         D = every other revision: all remaining points
Usage: run_all.py [--phases ABC] [--deadline EPOCH] [--prs 2707,145,...]
"""
import os, sys, json, gzip, time, argparse, multiprocessing as mp, traceback
sys.path.insert(0, '/tmp/rb/lib')
import envs, harness

WORK = '/tmp/rb/work'
HEAD_PR = 2707


def delta(prev, cur):
    d = {k: v for k, v in cur.items() if prev.get(k) != v}
    uns = sorted(k for k in prev if k not in cur)
    return d, uns


def shape(p):
    return json.dumps({k: v for k, v in p.items() if k != 'conc'}, sort_keys=True)


_revenv = {}


def revenv(pr):
    if pr not in _revenv:
        rev = next(r for r in envs.revisions() if r['pr'] == pr)
        _revenv[pr] = envs.RevEnv(rev)
    return _revenv[pr]


def shell_of(R):
    st, jb, tm = R.ch['step'], R.ch['job'], R.ch['tmpl']
    sh = st.get('shell') or ((jb.get('defaults') or {}).get('run') or {}).get('shell') or ((tm.get('defaults') or {}).get('run') or {}).get('shell')
    if not sh:
        return 'bash -e'
    if sh == 'bash':
        return 'bash --noprofile --norc -eo pipefail'
    return sh.replace('{0}', '').strip()


def work_unit(args):
    pr, key, phase, items = args   # items: list of (index, point)
    slot = mp.current_process()._identity[0] if mp.current_process()._identity else 0
    out = f'{WORK}/{pr}/{key}.{phase}.jsonl.gz'
    R = revenv(pr)
    sh = shell_of(R)
    lines = []
    stats = []
    for idx, p in items:
        try:
            L = R.launch(p)
            res = harness.run_point(slot, pr, L, p['runner'], shell=sh)
            calls = []
            prev = {}
            for c in res['calls']:
                d, uns = delta(prev, c['env'])
                cc = dict(cmd=c['cmd'], argv=c['argv'], cwd=c['cwd'], env=d)
                if uns:
                    cc['env_unset'] = uns
                calls.append(cc)
                prev = c['env']
            rec = dict(idx=idx, point=envs.point_fields(p), exit=res['exit'], timed_out=res['timed_out'],
                       secs=res['secs'], calls=calls, node=L['node'], job=L['job'], note=L['note'])
            if 'stderr_tail' in res:
                rec['stderr_tail'] = res['stderr_tail']
                rec['stdout_tail'] = res.get('stdout_tail', '')
            nf = [l for l in res['_err_full'].splitlines() if 'command not found' in l]
            if nf:
                rec['not_found'] = sorted(set(nf))[:20]
        except Exception:
            rec = dict(idx=idx, point=envs.point_fields(p), exit=-1, timed_out=False, secs=0, calls=[],
                       harness_error=traceback.format_exc()[-2000:])
        lines.append(rec)
        stats.append((rec['exit'], rec['timed_out'], rec['secs']))
    tmp = out + '.tmp'
    with gzip.open(tmp, 'wt') as fh:
        for l in lines:
            fh.write(json.dumps(l) + '\n')
    os.replace(tmp, out)
    return pr, key, phase, stats


F_COVER = lambda p: [('seq', p.get('scenario-type'), p.get('isl'), p.get('osl')), ('tp', p['tp']), ('ep', p.get('ep')),
                     ('dpa', p.get('dp-attn')), ('spec', p.get('spec-decoding')),
                     ('kvo', p.get('kv-offloading', p.get('offloading'))), ('kvb', str(p.get('kv-offload-backend')))]


def split_key(items):
    """-> (first, cover, rest): first point; further points until every value of every
    non-conc field has been seen; everything else."""
    first, cover, rest = [items[0]], [], []
    seen = set(F_COVER(items[0][1]))
    for i, p in items[1:]:
        f = set(F_COVER(p))
        if not f <= seen:
            cover.append((i, p)); seen |= f
        else:
            rest.append((i, p))
    return first, cover, rest


def plan(phases, prs=None):
    revs = envs.revisions()
    if prs:
        revs = [r for r in revs if r['pr'] in prs]
    head = [r for r in revs if r['pr'] == HEAD_PR]
    others = [r for r in revs if r['pr'] != HEAD_PR]
    # spread order: every 5th first so early results cover the history
    order = others[::5] + [r for i, r in enumerate(others) if i % 5]
    units = []
    by_size = sorted(others, key=lambda r: len(envs.points(r)))
    for ph in phases:
        # D: smallest revisions first, so that as many revisions as possible are complete
        todo = head if ph == 'A' else (by_size if ph == 'D' else order)
        for r in todo:
            pts = envs.points(r)
            bykey = {}
            for i, (k, p) in enumerate(pts):
                bykey.setdefault(k, []).append((i, p))
            for k, items in bykey.items():
                if ph == 'A':
                    sel = items
                else:
                    if r['pr'] == HEAD_PR:
                        continue
                    first, cover, rest = split_key(items)
                    sel = {'B': first, 'C': cover, 'D': rest}[ph]
                if not sel:
                    continue
                if os.path.exists(f'{WORK}/{r["pr"]}/{k}.{ph}.jsonl.gz'):
                    continue
                units.append((r['pr'], k, ph, sel))
    return units


def ensure_inputs():
    """/tmp/rb/repo (clone of the bundle) and /tmp/rb/trees/<pr> (git archive of each revision)."""
    import subprocess
    if not os.path.isdir('/tmp/rb/repo'):
        subprocess.run(['git', 'clone', '-q', '-b', 'main', '/work/shared/corpus/inferencex-v2.bundle', '/tmp/rb/repo'], check=True)
    for r in envs.revisions():
        d = f'/tmp/rb/trees/{r["pr"]}'
        if not os.path.isdir(d):
            os.makedirs(d)
            subprocess.run(f'git -C /tmp/rb/repo archive {r["sha"]} | tar -x -C {d}', shell=True, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--phases', default='ABCD')
    ap.add_argument('--deadline', type=float, default=0)
    ap.add_argument('--prs', default='')
    ap.add_argument('--workers', type=int, default=2)
    a = ap.parse_args()
    prs = {int(x) for x in a.prs.split(',') if x} or None
    ensure_inputs()
    harness.build_stub_dirs()
    units = plan(a.phases, prs)
    for pr in {u[0] for u in units}:
        os.makedirs(f'{WORK}/{pr}', exist_ok=True)
    n = sum(len(u[3]) for u in units)
    print(f'{len(units)} units, {n} points', flush=True)
    t0 = time.time()
    done = 0
    with mp.Pool(a.workers, maxtasksperchild=200) as pool:
        for pr, key, ph, st in pool.imap(work_unit, units):
            done += len(st)
            bad = sum(1 for e, t, s in st if e != 0)
            el = time.time() - t0
            print(f'{time.strftime("%H:%M:%S")} {pr} {ph} {key}: {len(st)} pts, {bad} nonzero; total {done}/{n} '
                  f'{el:.0f}s ({done / max(el, 1):.2f} pt/s)', flush=True)
            if a.deadline and time.time() > a.deadline:
                print('deadline reached', flush=True)
                pool.terminate()
                break


if __name__ == '__main__':
    main()
