#!/usr/bin/env python3
"""Run the repository's own sweep generator (full-sweep, the brief's command) at HEAD,
once on all master files and once per config key on a file holding only that key;
select the multi-node fixed-seq-len sglang-disagg / atom-disagg entries on mi355x runners
(with --agentic: the multi-node agentic-coding ones instead -> entries-agentic.json).

Writes /tmp/mnrb/work/gen/{cmd.txt,full.json,perkey.json,check.json,entries.json}."""
import json, os, subprocess, sys, collections, yaml

REPO = '/tmp/mnrb/repo'
OUT = '/tmp/mnrb/work/gen'
GEN = 'utils/matrix_logic/generate_sweep_configs.py'
MASTERS = ['configs/amd-master.yaml', 'configs/nvidia-master.yaml']
RUNNERS = 'configs/runners.yaml'


def argv(files):
    return ['python3', GEN, 'full-sweep', '--config-files', *files, '--runner-config', RUNNERS]


def run(files):
    p = subprocess.run(argv(files), cwd=REPO, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr[-2000:]
    return json.loads(p.stdout), None


AGENTIC = '--agentic' in sys.argv   # select the agentic-coding entries instead of the fixed-seq-len ones


def selected(e):
    return (('prefill' in e or 'decode' in e) and (e.get('scenario-type') == 'agentic-coding') == AGENTIC
            and e.get('framework') in ('sglang-disagg', 'atom-disagg') and str(e.get('runner', '')).split(':', 1)[-1].startswith('mi355x'))  # label mi355x* or cluster:mi355x*


def canon(e):
    return json.dumps(e, sort_keys=True)


def main():
    os.makedirs(OUT + '/keys', exist_ok=True)
    open(OUT + '/cmd.txt', 'w').write(' '.join(argv(MASTERS)) + '\n')
    full, err = run(MASTERS)
    if full is None:
        sys.exit('generator failed: ' + err)
    json.dump(full, open(OUT + '/full.json', 'w'))
    merged = {}
    for m in MASTERS:
        for k, v in (yaml.safe_load(open(os.path.join(REPO, m))) or {}).items():
            merged[k] = v
    perkey = {}
    for k, v in merged.items():
        kf = os.path.join(OUT, 'keys', k.replace('/', '_') + '.yaml')
        with open(kf, 'w') as fh:
            yaml.safe_dump({k: v}, fh, sort_keys=False)
        res, err = run([kf])
        perkey[k] = res if res is not None else {'error': err}
    json.dump(perkey, open(OUT + '/perkey.json', 'w'))
    u = collections.Counter()
    for k, v in perkey.items():
        if isinstance(v, list):
            u.update(canon(e) for e in v)
    fc = collections.Counter(canon(e) for e in full)
    check = dict(full_n=len(full), perkey_n=sum(u.values()), equal=(u == fc),
                 key_errors={k: v['error'][-300:] for k, v in perkey.items() if isinstance(v, dict)})
    # entries, in the full run's order, with the key(s) whose own output holds them
    owners = collections.defaultdict(list)
    for k, v in perkey.items():
        if isinstance(v, list):
            for e in v:
                if selected(e):
                    owners[canon(e)].append(k)
    entries, seen = [], collections.Counter()
    for i, e in enumerate(full):
        if not selected(e):
            continue
        c = canon(e)
        ks = owners.get(c, [])
        # identical entries from several keys: the n-th occurrence goes to the n-th owner
        n = seen[c]; seen[c] += 1
        key = ks[n] if n < len(ks) else (ks[0] if ks else '')
        entries.append(dict(index=i, key=key, keys_with_identical_entry=sorted(set(ks)) if len(set(ks)) > 1 else [], entry=e))
    check['selected'] = len(entries)
    check['selected_without_key'] = sum(1 for x in entries if not x['key'])
    json.dump(check, open(OUT + ('/check-agentic.json' if AGENTIC else '/check.json'), 'w'), indent=1)
    json.dump(entries, open(OUT + ('/entries-agentic.json' if AGENTIC else '/entries.json'), 'w'), indent=1)
    print(json.dumps({k: v for k, v in check.items() if k != 'key_errors'}), len(check['key_errors']), 'key errors')


if __name__ == '__main__':
    main()
