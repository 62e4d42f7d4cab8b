"""Run one point's launch step under the namespace harness and collect records."""
import os, shutil, subprocess, json, time

LIB = '/tmp/rb/lib'
RUN = '/tmp/rb/run'
TREES = '/tmp/rb/trees'
TIMEOUT = int(os.environ.get('RB_TIMEOUT', '20'))
HARNESS_PATHS = {'/.rb/stubs:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'}
HARNESS_HOMES = {'/home/runner', '/root'}
ALWAYS_DROP = {'PWD', 'SHLVL', '_', 'OLDPWD'}

GPU = [  # label prefix -> vendor, name, MiB, compute cap, gfx
    ('gb300', 'nvidia', 'NVIDIA GB300', '284208', '10.3', ''),
    ('gb200', 'nvidia', 'NVIDIA GB200', '189471', '10.0', ''),
    ('b300', 'nvidia', 'NVIDIA B300 SXM6 AC', '275040', '10.3', ''),
    ('b200', 'nvidia', 'NVIDIA B200', '183359', '10.0', ''),
    ('h200', 'nvidia', 'NVIDIA H200', '143771', '9.0', ''),
    ('h100', 'nvidia', 'NVIDIA H100 80GB HBM3', '81559', '9.0', ''),
    ('rtx', 'nvidia', 'NVIDIA RTX PRO 6000 Blackwell Server Edition', '97887', '12.0', ''),
    ('mi355x', 'amd', 'AMD Instinct MI355X', '294896', '', 'gfx950'),
    ('mi325x', 'amd', 'AMD Instinct MI325X', '262128', '', 'gfx942'),
    ('mi300x', 'amd', 'AMD Instinct MI300X', '196592', '', 'gfx942'),
]


def gpu_info(label):
    label = label.split(':', 1)[-1]
    for pre, *rest in GPU:
        if label.startswith(pre):
            return rest
    return ['nvidia', 'NVIDIA GPU', '81559', '9.0', '']


NSINIT = f'{LIB}/nsinit.sh'


STUB_TAG = ''


def build_stub_dirs(tag=''):
    global NSINIT, STUB_TAG
    STUB_TAG = tag
    snap = f'{RUN}/nsinit.{os.getpid()}.sh'
    os.makedirs(RUN, exist_ok=True)
    shutil.copy2(f'{LIB}/nsinit.sh', snap)
    NSINIT = snap
    names = open(f'{LIB}/stubnames.txt').read().split()
    for vendor, drop in (('nvidia', {'rocm-smi', 'amd-smi', 'rocminfo'}), ('amd', {'nvidia-smi'})):
        d = f'{LIB}/stubs_{vendor}{tag}'
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for f in ('.container', '.docker', '.slurm'):
            shutil.copy2(f'{LIB}/stubs/{f}', f'{d}/{f}')
        shutil.copy2(f'{LIB}/stub.sh', f'{d}/.stub.sh')
        for n in names:
            if n not in drop:
                os.symlink('.stub.sh', f'{d}/{n}')


RACE_US = 20000   # records started within 20 ms of each other are put in fork (pid) order


def parse_records(recdir):
    """Records in start order. Primary key: the time the stub started. Processes forked
    almost together (a background server and the next foreground command) are put in fork
    order (pid; pids grow monotonically in the fresh pid namespace), except when the earlier
    record is a child of the later one (bash forked it for $(...) or a non-final command and
    then exec'd the later command in the same process)."""
    metas = []
    for fn in os.listdir(recdir):
        if fn.endswith('.t'):
            continue
        parts = fn.split('.')
        try:
            metas.append((int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 3 else -1, fn))
        except ValueError:
            continue
    metas.sort()
    # insertion pass: move a record before near-simultaneous records with a higher pid
    order = []
    for m in metas:
        j = len(order)
        while j > 0:
            p = order[j - 1]
            if m[0] - p[0] < RACE_US and m[1] < p[1] and p[2] != m[1]:
                j -= 1
            else:
                break
        order.insert(j, m)
    out = []
    for t, pid, ppid, fn in order:
        raw = open(os.path.join(recdir, fn), 'rb').read().decode('utf-8', 'replace')
        parts = raw.split('\0')
        try:
            cmd, cwd, argc = parts[0], parts[1], int(parts[2])
        except (IndexError, ValueError):
            continue  # partial record (process killed while writing)
        argv = parts[3:3 + argc]
        env = {}
        for item in parts[3 + argc:]:
            if not item or '=' not in item:
                continue
            k, _, v = item.partition('=')
            env[k] = v
        for k in list(env):
            if k in ALWAYS_DROP or (k == 'PATH' and env[k] in HARNESS_PATHS) or (k == 'HOME' and env[k] in HARNESS_HOMES):
                del env[k]
        out.append(dict(cmd=cmd, argv=argv, env=env, cwd=cwd))
    return out


def run_point(slot, pr, launch, label, shell='bash -e'):
    S = f'{RUN}/slot{slot}'
    if os.path.isdir(S + '/rec'):
        shutil.rmtree(S + '/rec')
    for d in ('root', 'rec', 'info'):
        os.makedirs(f'{S}/{d}', exist_ok=True)
    for f in ('rc', 'out', 'err'):
        try:
            os.remove(f'{S}/{f}')
        except FileNotFoundError:
            pass
    vendor, gname, gmem, cc, gfx = gpu_info(label)
    info = dict(workspace=launch['env']['GITHUB_WORKSPACE'], shell=shell, gpu_name=gname, gpu_mem=gmem,
                compute_cap=cc, gfx=gfx, hostname=launch['node'], slurm_node=launch['node'].replace('_', '-'),
                vendor=vendor)
    info['precreate'] = '\n'.join(host_dirs(pr))
    for k, v in info.items():
        open(f'{S}/info/{k}', 'w').write(v + '\n' if k != 'shell' else v)
    env = dict(launch['env'])
    env['PATH'] = next(iter(HARNESS_PATHS)).replace('/.rb/stubs', '/.rb/stubs')
    env['HOME'] = '/home/runner'
    with open(f'{S}/env0', 'wb') as fh:
        for k, v in env.items():
            fh.write(f'{k}={v}'.encode() + b'\0')
    open(f'{S}/step.sh', 'w').write(launch['script'] + '\n')
    stubdir = f'{LIB}/stubs_{vendor}{STUB_TAG}'
    # nsinit binds /tmp/rb/lib/stubs; point it at the vendor dir via a per-slot symlink-free copy path
    cmd = ['timeout', '-k', '3', str(TIMEOUT), 'unshare', '-m', '-p', '-f', '--kill-child', '--propagation', 'private',
           NSINIT, S, f'{TREES}/{pr}', stubdir]
    t0 = time.time()
    with open(f'{S}/out', 'wb') as o, open(f'{S}/err', 'wb') as e:
        p = subprocess.run(cmd, stdout=o, stderr=e)
    dt = time.time() - t0
    rc = p.returncode
    timed_out = rc in (124, 137) and not os.path.exists(f'{S}/rc')
    calls = parse_records(S + '/rec')

    def tail(f, n=1500):
        try:
            b = open(f, 'rb').read()
        except FileNotFoundError:
            return ''
        return b[-n:].decode('utf-8', 'replace')
    res = dict(exit=rc, timed_out=timed_out, secs=round(dt, 2), calls=calls)
    if rc != 0 or timed_out:
        res['stderr_tail'] = tail(f'{S}/err')
        res['stdout_tail'] = tail(f'{S}/out', 600)
    res['_err_full'] = tail(f'{S}/err', 20000)
    return res


import re as _re
_PRE_CACHE = {}
_EXCL = ('/dev', '/proc', '/sys', '/usr', '/etc', '/bin', '/lib', '/sbin', '/tmp/inferencex', '/run', '/workspace', '/sgl-workspace',
         '/opt', '/configs', '/.', '/root', '/hf_hub_cache', '/aiperf_mmap_cache', '/models/')


def host_dirs(pr):
    """Absolute directory paths named in the revision's runners/*.sh: dirs a provisioned runner host has."""
    if pr in _PRE_CACHE:
        return _PRE_CACHE[pr]
    out = set()
    rd = f'{TREES}/{pr}/runners'
    for f in sorted(os.listdir(rd)):
        if not f.endswith('.sh'):
            continue
        t = open(os.path.join(rd, f), errors='replace').read()
        for m in _re.finditer(r'(?<![\w$}./-])(/(?:[\w.+-]+/)*[\w.+-]+/?)', t):
            p = m.group(1).rstrip('/')
            if p.count('/') < 2 or p.startswith(_EXCL) or not _re.search(r'[a-z]{2}', p.split('/')[1]) or p == '/models' or 'XXXX' in p:
                continue
            last = p.rsplit('/', 1)[1]
            if _re.search(r'\.(sqsh|sh|json|yaml|yml|py|log|txt|out|err|lock|csv|tar|gz)$', last) or last.endswith('-'):
                p = p.rsplit('/', 1)[0]
                if p.count('/') < 2:
                    continue
            out.add(p)
    _PRE_CACHE[pr] = sorted(out)
    return _PRE_CACHE[pr]
