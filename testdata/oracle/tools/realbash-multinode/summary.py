#!/usr/bin/env python3
"""Counts for the README, and a determinism check against a second run."""
import gzip, json, sys, collections

def load(p):
    return [json.loads(l) for l in gzip.open(p, 'rt')]

AG = '--agentic' in sys.argv
sys.argv = [a for a in sys.argv if a != '--agentic']
main = load('/tmp/mnrb/out/real-launch-multinode' + ('-agentic' if AG else '') + '.jsonl.gz')
kinds = collections.Counter(c['kind'] for d in main for c in d['calls'])
print('entries', len(main), 'calls', sum(kinds.values()), dict(kinds))
print('by framework', dict(collections.Counter(d['framework'] for d in main)))
print('nodes per entry', dict(collections.Counter(len({c['node'] for c in d['calls']}) for d in main)))
print('exit', dict(collections.Counter(d['exit'] for d in main)), 'timed_out', sum(d['timed_out'] for d in main))
print('secs total', round(sum(d['secs'] for d in main)), 'max', max(d['secs'] for d in main))
ne = collections.Counter(x['exit'] for d in main for x in d['node_exits'])
print('per-node container exits', dict(ne), 'entries with a non-zero node exit', sum(1 for d in main if any(x['exit'] for x in d['node_exits'])))
print('results copied', sum(len(d['result_files_in_workspace']) for d in main), 'conc values', sum(len(d['conc']) for d in main))
for p in sys.argv[1:]:
    other = load(p)
    if p.split('/')[-1].startswith('bundle-modes'):
        print(p, 'exit', dict(collections.Counter(d['exit'] for d in other)), 'calls', sum(len(d['calls']) for d in other),
              'node exits', dict(collections.Counter(x['exit'] for d in other for x in d['node_exits'])))
        continue
    strip = lambda d: [(c['kind'], c['rank'], c['node'], c['argv'], sorted(c['env'].items())) for c in d['calls']]
    diff = [d['n'] for d, o in zip(main, other) if strip(d) != strip(o)]
    print(p, 'entries whose calls differ from the main run:', diff)
