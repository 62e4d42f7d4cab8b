#!/usr/bin/env python3
"""Environment + launch-step text for a multi-node matrix entry, evaluated from the
repository's own workflows as GitHub Actions would (own ${{ }} evaluator: ghexpr.py /
ghyaml.py of the earlier workflow-env helper, testdata/oracle/tools/workflow-env/,
copied beside this file to run it).

Chain: run-sweep.yml job sweep-multi-node-<1k1k|8k1k> `with:` (matrix.config = the entry)
 -> benchmark-multinode-tmpl.yml inputs (declared types/defaults) -> template `env:`
 -> job `env:` (none) -> step "Launch multi-node job script" `env:` -> the step's `run:`
 lines up to and including `bash ./runners/launch_...` (${{ }} substituted)."""
import json, os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yaml
import ghyaml
from ghexpr import eval_value, Placeholder, to_str, to_num

REPO = '/tmp/mnrb/repo'
TMPL = '.github/workflows/benchmark-multinode-tmpl.yml'
CALLER = '.github/workflows/run-sweep.yml'
WS = '/runner/_work/InferenceX/InferenceX'      # stand-in GITHUB_WORKSPACE (as the earlier oracle)
RUNNER_TEMP = '/runner/_work/_temp'
GITHUB_ENV_FILE = RUNNER_TEMP + '/_runner_file_commands/set_env_0'
STEP_SUMMARY = RUNNER_TEMP + '/_runner_file_commands/step_summary_0'
# what the Actions runner itself puts into every step's process (stand-ins, as the earlier oracle)
RUNNER_DEFAULTS = {'GITHUB_WORKSPACE': WS, 'GITHUB_ACTIONS': 'true', 'CI': 'true', 'RUNNER_TEMP': RUNNER_TEMP,
                   'GITHUB_ENV': GITHUB_ENV_FILE, 'USER': 'runner'}
# the runner overwrites these context-derived names after merging workflow/job/step env
GITHUB_RUNTIME = {'action_path', 'action_ref', 'action_repository', 'action', 'actor', 'actor_id', 'api_url',
                  'base_ref', 'env', 'event_name', 'event_path', 'graphql_url', 'head_ref', 'job', 'output', 'path',
                  'ref_name', 'ref_protected', 'ref_type', 'ref', 'repository', 'repository_id', 'repository_owner',
                  'repository_owner_id', 'retention_days', 'run_attempt', 'run_id', 'run_number', 'server_url', 'sha',
                  'state', 'step_summary', 'triggering_actor', 'workflow', 'workflow_ref', 'workflow_sha', 'workspace'}
RUNNER_RUNTIME = {'name', 'os', 'arch', 'temp', 'tool_cache', 'debug', 'environment', 'workspace'}
SEQ = {(1024, 1024): '1k1k', (8192, 1024): '8k1k', (1024, 8192): '1k8k'}


def show(path):
    return open(os.path.join(REPO, path)).read()


class Ctx:
    def __init__(self):
        self.tmpl = ghyaml.load(show(TMPL))
        self.caller = ghyaml.load(show(CALLER))
        self.decl = self.tmpl['on']['workflow_call']['inputs']
        self.job = self.tmpl['jobs']['benchmark']
        self.step = next(s for s in self.job['steps'] if 'runners/launch_' in (s.get('run') or ''))
        self.runners = yaml.safe_load(show('configs/runners.yaml'))

    def runner_name(self, label):
        lst = (self.runners.get('labels', self.runners) or {}).get(label) or []
        for n in lst:
            if str(n).startswith('mi355x-amds'):
                return str(n)
        raise KeyError(f'no mi355x-amds runner for label {label}')

    def caller_job(self, e):
        if e.get('scenario-type') == 'agentic-coding':     # run-sweep.yml dispatches multi_node['agentic'] here
            jid = 'sweep-multi-node-agentic'
            return jid, self.caller['jobs'][jid]
        jid = 'sweep-multi-node-' + SEQ[(e['isl'], e['osl'])]
        return jid, self.caller['jobs'][jid]


def base_ctx():
    return {'runner': Placeholder('runner'), 'secrets': Placeholder('secrets'), 'github': Placeholder('github'),
            'vars': Placeholder('vars'), 'inputs': {}, 'job': Placeholder('job'), 'strategy': Placeholder('strategy'),
            'steps': Placeholder('steps')}


def inputs_for(C, e, notes):
    jid, job = C.caller_job(e)
    ctx = base_ctx()
    ctx['matrix'] = {'config': e}
    passed = {k: eval_value(v, ctx) for k, v in (job.get('with') or {}).items()}
    ins = {}
    for name, d in C.decl.items():
        d = d or {}
        typ = d.get('type', 'string')
        if name in passed:
            v = passed[name]
        elif 'default' in d:
            v = d['default']
        else:
            v = {'boolean': False, 'number': 0}.get(typ, '')
        if typ == 'boolean':
            if not isinstance(v, bool):
                notes.append(f'input {name} (boolean) receives {v!r}')
        elif typ == 'number':
            v = to_num(v)
        else:
            v = to_str(v)
        ins[name] = v
    for k in passed:
        if k not in C.decl:
            notes.append(f'caller passes undeclared input {k}')
    return jid, ins


def launch(C, e):
    """-> dict(env, script, runner_name, caller_job, notes)"""
    notes = []
    jid, ins = inputs_for(C, e, notes)
    ctx = base_ctx()
    ctx['inputs'] = ins
    env = {}
    for k, v in (C.tmpl.get('env') or {}).items():
        env[k] = to_str(eval_value(v, ctx))
    ctx['env'] = dict(env)
    for k, v in (C.job.get('env') or {}).items():
        env[k] = to_str(eval_value(v, ctx))
    ctx['env'] = dict(env)
    for k, v in (C.step.get('env') or {}).items():
        env[k] = to_str(eval_value(v, ctx))
    for k in list(env):
        m = re.match(r'^GITHUB_(.+)$', k)
        if m and m.group(1).lower() in GITHUB_RUNTIME:
            env[k] = '{github.' + m.group(1).lower() + '}'
        m = re.match(r'^RUNNER_(.+)$', k)
        if m and m.group(1).lower() in RUNNER_RUNTIME:
            env[k] = '{runner.' + m.group(1).lower() + '}'
    lines = C.step['run'].split('\n')
    idx = next(i for i, l in enumerate(lines) if 'bash ./runners/launch_' in l)
    text = '\n'.join(lines[:idx + 1])
    text = to_str(eval_value(text, ctx)) if '${{' in text else text
    node = C.runner_name(e['runner'])

    def sub(x):
        x = x.replace('{runner.name}', node)
        x = x.replace('{github.step_summary}', STEP_SUMMARY)
        x = x.replace('{github.workspace}', WS)
        x = re.sub(r'\{secrets\.([A-Za-z0-9_]+)\}', lambda m: 'SECRET_' + m.group(1), x)
        x = re.sub(r'\{github\.([a-z_]+)\}', lambda m: 'GITHUB_' + m.group(1).upper(), x)
        x = re.sub(r'\{runner\.([a-z_]+)\}', lambda m: 'RUNNER_' + m.group(1).upper(), x)
        return x
    full = dict(RUNNER_DEFAULTS)
    full.update({k: sub(v) for k, v in env.items()})
    shell = C.step.get('shell') or ((C.job.get('defaults') or {}).get('run') or {}).get('shell') \
        or ((C.tmpl.get('defaults') or {}).get('run') or {}).get('shell')
    shell = 'bash -e' if not shell else ('bash --noprofile --norc -eo pipefail' if shell == 'bash' else shell.replace('{0}', '').strip())
    return dict(env=full, script=sub(text), runner_name=node, caller_job=f'{CALLER}:{jid}', shell=shell, notes=notes)


if __name__ == '__main__':
    C = Ctx()
    ents = json.load(open('/tmp/mnrb/work/gen/' + ('entries-agentic.json' if '--agentic' in sys.argv else 'entries.json')))
    sys.argv = [a for a in sys.argv if a != '--agentic']
    i = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    L = launch(C, ents[i]['entry'])
    for k in sorted(L['env']):
        print(f'{k}={L["env"][k]!r}')
    print('----'); print(L['script']); print('----', L['runner_name'], L['caller_job'], L['shell'], L['notes'])
