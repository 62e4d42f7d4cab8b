"""Run the repository's own sweep generator at a revision."""
import hashlib, json, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(__file__))
import yaml
from chain import git, REPO

WT_ROOT = '/tmp/wfo/wt'
CACHE = '/tmp/wfo/cache'
os.makedirs(WT_ROOT, exist_ok=True)
os.makedirs(CACHE, exist_ok=True)


def worktree(commit):
    path = os.path.join(WT_ROOT, commit[:12])
    if not os.path.isdir(path):
        subprocess.run(['git', '-C', REPO, 'worktree', 'add', '-q', '--detach', path, commit], check=True)
    return path


def gen_info(commit):
    wt = worktree(commit)
    gen = None
    for cand in ('utils/matrix_logic/generate_sweep_configs.py', 'utils/matrix-logic/generate_sweep_configs.py'):
        if os.path.exists(os.path.join(wt, cand)):
            gen = cand
            break
    cfgdir = 'configs' if os.path.exists(os.path.join(wt, 'configs/runners.yaml')) else '.github/configs'
    masters = sorted(f'{cfgdir}/{f}' for f in os.listdir(os.path.join(wt, cfgdir)) if f.endswith('-master.yaml'))
    helptext = subprocess.run([sys.executable, gen, 'full-sweep', '-h'], cwd=wt, capture_output=True, text=True).stdout
    flags = []
    if '--single-node' in helptext:
        flags.append('--single-node')
    if '--no-evals' in helptext:
        flags.append('--no-evals')
    return dict(wt=wt, gen=gen, cfgdir=cfgdir, masters=masters, runners=f'{cfgdir}/runners.yaml',
                flags=flags, has_runner_config='--runner-config' in helptext)


def cmdline(info, config_files):
    cmd = ['python3', info['gen'], 'full-sweep', '--config-files', *config_files]
    if info['has_runner_config']:
        cmd += ['--runner-config', info['runners']]
    cmd += info['flags']
    return cmd


def run_gen(info, config_files):
    cmd = cmdline(info, config_files)
    # cache on the content of generator dir + runners + config files + flags
    h = hashlib.sha1()
    gdir = os.path.join(info['wt'], os.path.dirname(info['gen']))
    for f in sorted(os.listdir(gdir)):
        if f.endswith('.py'):
            h.update(f.encode()); h.update(open(os.path.join(gdir, f), 'rb').read())
    for f in [info['runners'], *config_files]:
        p = f if os.path.isabs(f) else os.path.join(info['wt'], f)
        h.update(open(p, 'rb').read())
    h.update(json.dumps(cmd[4 + len(config_files):]).encode())
    cp = os.path.join(CACHE, h.hexdigest() + '.json')
    if os.path.exists(cp):
        return json.load(open(cp))
    r = subprocess.run([sys.executable, *cmd[1:]], cwd=info['wt'], capture_output=True, text=True)
    if r.returncode != 0:
        res = {'error': r.stderr[-3000:]}
    else:
        res = {'out': json.loads(r.stdout)}
    json.dump(res, open(cp, 'w'))
    return res


def load_masters(info):
    """key -> (file, entry)"""
    out = {}
    for f in info['masters']:
        d = yaml.safe_load(open(os.path.join(info['wt'], f))) or {}
        for k, v in d.items():
            out.setdefault(k, []).append((f, v))
    return out


def run_single_key(info, key, entry, tmpname='single'):
    tmpdir = tempfile.mkdtemp(prefix='wfo_key_')
    p = os.path.join(tmpdir, f'{tmpname}-master.yaml')
    with open(p, 'w') as fh:
        yaml.safe_dump({key: entry}, fh, sort_keys=False)
    res = run_gen(info, [p])
    return res
