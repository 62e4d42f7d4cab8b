import json, os, sys, re, collections
sys.path.insert(0, '/tmp/wfo/lib')
from main import *

COLS = ['pr', 'commit', 'key', 'scenario', 'isl', 'osl', 'tp', 'ep', 'dp_attn', 'conc', 'spec',
        'kv_offloading', 'kv_backend', 'runner', 'var', 'value']


def cell(v):
    if v is None:
        return ''
    if isinstance(v, bool):
        return 'true' if v else 'false'
    return to_str(v)


def main(only=None):
    revs = revisions()
    report = []
    rows = []
    for commit, pr, why in revs:
        if only and commit[:len(only)] != only:
            continue
        short = commit[:10]
        rep = dict(commit=commit, short=short, pr=pr, why=why, subject=git('log', '-1', '--format=%s', commit).strip(),
                   date=git('log', '-1', '--format=%ad', '--date=short', commit).strip(), notes=[], points=[])
        ch = chain(commit)
        ch['commit'] = commit
        info = gen_info(commit)
        rep['template'] = SN_TMPL
        rep['launch_step'] = ch['step'].get('name')
        rep['callers'] = {c: sorted(j) for c, j in ch['callers'].items()}
        rep['gen_cmd'] = ' '.join(cmdline(info, info['masters']))
        res = run_gen(info, info['masters'])
        if 'error' in res:
            rep['notes'].append('generator failed: ' + res['error'])
            report.append(rep)
            continue
        points = res['out']
        rep['n_points'] = len(points)
        rep['n_single'] = sum(is_single_node(p) for p in points)
        rep['n_excluded_multinode_shape'] = len(points) - rep['n_single']
        masters = load_masters(info)
        decl = ch['tmpl']['on']['workflow_call']['inputs']

        def prefix_guess(p):
            return p.get('model-prefix') or (p.get('exp-name') or '').split('_')[0]

        def ok(i, p):
            return caller_job_for(ch, p, prefix_guess(p)) is not None
        no_job = [p for p in points if is_single_node(p) and not ok(0, p)]
        if no_job:
            rep['notes'].append(f'{len(no_job)} single-node points have no single-node caller job in the full sweep at this revision '
                                f'(e.g. prefix/seq-len combos {sorted({(prefix_guess(p), SEQ.get((p.get("isl"), p.get("osl")), p.get("scenario-type"))) for p in no_job})[:8]}); not eligible')
        chosen = choose(points, ok)
        for idx, p, reasons in chosen:
            hits, cands, errs = find_key(info, masters, p)
            prep = dict(index=idx, reasons=reasons, point=p, notes=[])
            if errs:
                prep['notes'].append(f'per-key generator errors: {errs}')
            if not hits:
                prep['notes'].append(f'no config key reproduces this point (candidates {[c[0] for c in cands]})')
                key = ''
            else:
                key = hits[0][0]
                if len(hits) > 1:
                    prep['notes'].append(f'point reproduced by several keys {[h[0] for h in hits]}; used first')
                entry_prefix = hits[0][2].get('model-prefix')
            prefix = p.get('model-prefix') or (hits[0][2].get('model-prefix') if hits else prefix_guess(p))
            cj = caller_job_for(ch, p, prefix)
            cfile, jid, job = cj
            prep.update(key=key, caller=cfile, job=jid)
            notes = []
            inputs, src = caller_inputs(job, p, decl, notes)
            env, origin, pre, launch = env_for(ch, dict(inputs))
            prep['notes'] += notes
            prep['input_src'] = src
            prep['env'] = env
            prep['origin'] = origin
            rep['pre_script'] = pre
            rep['launch_line'] = launch
            rep['points'].append(prep)
            agentic = is_agentic(p)
            kvb = p.get('kv-offload-backend')
            if isinstance(kvb, dict):
                kvb = kvb.get('name')
            base = dict(pr=pr, commit=short, key=key,
                        scenario=p.get('scenario-type') or 'fixed-seq-len',
                        isl='' if agentic else cell(p.get('isl')), osl='' if agentic else cell(p.get('osl')),
                        tp=cell(p.get('tp')), ep=cell(p.get('ep')),
                        dp_attn='true' if p.get('dp-attn') is True else 'false',
                        conc=cell(p.get('conc')), spec=cell(p.get('spec-decoding')),
                        kv_offloading=cell(kv_off(p)), kv_backend=cell(kvb), runner=cell(p.get('runner')))
            for var in sorted(env):
                r = dict(base)
                r['var'] = var
                r['value'] = esc(env[var])
                rows.append(r)
        report.append(rep)
        print(short, pr, len(chosen), 'points', file=sys.stderr)
    return report, rows


if __name__ == '__main__':
    only = sys.argv[1] if len(sys.argv) > 1 else None
    report, rows = main(only)
    suffix = '' if not only else '.' + only
    with open(f'/tmp/wfo/workflow-env.tsv{suffix}', 'w') as fh:
        fh.write('\t'.join(COLS) + '\n')
        for r in rows:
            fh.write('\t'.join(r[c] for c in COLS) + '\n')
    json.dump(report, open(f'/tmp/wfo/report{suffix}.json', 'w'), indent=1, default=str)
    print(len(rows), 'rows', file=sys.stderr)
