import gzip, json
want = {'sglang': lambda c: c['cmd'].startswith('python') and 'sglang.launch_server' in c['argv'],
        'vllm': lambda c: c['cmd'] == 'vllm' and c['argv'][:1] == ['serve'],
        'trtllm': lambda c: c['cmd'] == 'trtllm-serve'}
keys = {'sglang': 'dsr1-fp4-mi355x-sglang', 'vllm': 'dsv4-fp8-h200-vllm', 'trtllm': 'dsr1-fp8-h200-trt'}
got = {}
for l in gzip.open('/tmp/rb/out/real-launch.jsonl.gz', 'rt'):
    r = json.loads(l)
    if r['pr'] != 2707 or r['exit'] != 0:
        continue
    for k, f in want.items():
        if k not in got and r['key'] == keys[k] and any(f(c) for c in r['calls']):
            got[k] = r
for k, r in got.items():
    head = {x: r[x] for x in ('pr', 'commit', 'key', 'scenario', 'isl', 'osl', 'tp', 'ep', 'dp_attn', 'conc', 'spec',
                              'kv_offloading', 'kv_backend', 'runner', 'exit', 'error', 'node')}
    print(f'--- {k}: {json.dumps(head)}')
    print('  cmds:', ' '.join(c['cmd'] for c in r['calls']))
    for c in r['calls']:
        if want[k](c) or (c['cmd'].startswith('python') and any('benchmark_serving' in a for a in c['argv'])):
            e = c['env']
            print('  ', json.dumps(dict(cmd=c['cmd'], argv=c['argv'], cwd=c['cwd'],
                                      env=dict(list(e.items())[:6]) if len(e) > 6 else e))[:1600])
