import sys; sys.path.insert(0,'/tmp/wfo/lib')
from ghexpr import *
ctx = {'inputs': {'scenario-type': 'agentic-coding', 'dp-attn': True, 'x': '', 'n': 0, 'agentx-fast': False},
       'matrix': {'config': {'tp': 4, 'kv-offload-backend': {'name': 'lmcache', 'version': '0.3'}, 'router': None, 'conc': [1,2], 'a': {'b-c': 'd'}}},
       'runner': Placeholder('runner'), 'secrets': Placeholder('secrets'), 'github': Placeholder('github'), 'vars': Placeholder('vars'), 'env': {'EXP_NAME': 'e'}}
tests = [
 ("${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}", 'agentic/'),
 ("${{ inputs.scenario-type == 'AGENTIC-CODING' }}", True),
 ("${{ inputs.x == 0 }}", True),
 ("${{ '1' == 1 }}", True),
 ("${{ '0x10' == 16 }}", True),
 ("${{ null == 0 }}", True),
 ("${{ null == '' }}", True),
 ("${{ true == 1 }}", True),
 ("${{ 'abc' == 0 }}", False),
 ("${{ inputs.agentx-fast && '1' || '0' }}", '0'),
 ("${{ inputs.n || 'd' }}", 'd'),
 ("${{ inputs.x && 'a' }}", ''),
 ("${{ matrix.config.tp }}", 4),
 ("tp${{ matrix.config.tp }}", 'tp4'),
 ("${{ matrix.config['kv-offload-backend'].name }}", 'lmcache'),
 ("${{ matrix.config['kv-offload-backend'] && toJson(matrix.config['kv-offload-backend']) || '' }}", '{\n  "name": "lmcache",\n  "version": "0.3"\n}'),
 ("${{ matrix.config.router && toJson(matrix.config.router) || '' }}", ''),
 ("${{ matrix.config.a.b-c }}", 'd'),
 ("${{ matrix.config.missing }}", None),
 ("${{ matrix.config.missing.deeper }}", None),
 ("${{ format('{0}-{1}', 'a', 3) }}", 'a-3'),
 ("${{ format('{{x}}{0}', 'a') }}", '{x}a'),
 ("${{ !inputs.x }}", True),
 ("${{ !(inputs.x || 'q') }}", False),
 ("x_${{ runner.name }}", 'x_{runner.name}'),
 ("${{ secrets.HF_TOKEN }}", '{secrets.HF_TOKEN}'),
 ("${{ contains(github.event.pull_request.labels.*.name, 'agentx-fast') }}", False),
 ("${{ toJson(matrix.config.conc) }}", '[\n  1,\n  2\n]'),
 ("${{ join(matrix.config.conc, ' ') }}", '1 2'),
 ("${{ 'it''s' }}", "it's"),
 ("${{ 'false' }}", 'false'),
 ("${{ matrix.config.conc[0] }}", 1),
 ("${{ 1.50 }}", 1.5),
 ("a ${{ 0.8 }} ${{ true }} ${{ null }}|", 'a 0.8 true |'),
 ("${{ matrix.CONFIG.TP }}", 4),
 ("${{ vars.PRIORITY_SCHEDULER_ENABLED == 'true' }}", False),
]
bad = 0
for src, exp in tests:
    got = eval_value(src, ctx)
    ok = got == exp and type(got) == type(exp)
    if not ok: bad += 1
    print('OK ' if ok else 'BAD', repr(src), '->', repr(got))
print('bad', bad)
