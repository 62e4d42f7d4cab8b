#!/usr/bin/env python3
"""Write /tmp/rb/out/README.md from /tmp/rb/out/stats.json."""
import json, os, collections, time

OUT = '/tmp/rb/out'
stats = json.load(open(f'{OUT}/stats.json'))
size = os.path.getsize(f'{OUT}/real-launch.jsonl.gz')
revs = sorted(stats.values(), key=lambda s: s['pr'])
tot_run = sum(s['points_run'] for s in revs)
tot_all = sum(s['points_total'] for s in revs)
tot_ok = sum(s['exit0'] for s in revs)
tot_to = sum(s['timeouts'] for s in revs)
complete = [s for s in revs if s['points_run'] == s['points_total']]
causes = collections.Counter()
cause_revs = collections.defaultdict(set)
for s in revs:
    for c, n in s['causes'].items():
        causes[c] += n
        cause_revs[c].add(s['pr'])

L = []
w = L.append
w('# Real-bash launch oracle for InferenceX single-node benchmark points')
w('')
w(f'Generated {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}. Everything here was built from the git bundle '
  '(`/tmp/rb/repo`), the generator output in `/tmp/gen` and the workflow-env code in `/tmp/wfo/lib` '
  '(imported, not copied). Nothing under `/work/main` was read.')
w('')
w('## Files')
w('')
w('| file | content |')
w('|---|---|')
w(f'| `real-launch.jsonl.gz` | one JSON line per (revision, point) that was run: {tot_run} lines, {size} bytes |')
w('| `stats.json` | per revision: points listed by the generator, points run, exit-0 count, timeouts, failure causes |')
w('| `README.md` | this file |')
w('| `/tmp/rb/lib/` | the code (see "How it was made") |')
w('| `/tmp/rb/work/<pr>/<key>.<phase>.jsonl.gz` | raw per-work-unit results (also holds `secs`, the full stderr tail, `not_found` lines) |')
w('')
w('## Regenerate')
w('')
w('```')
w('python3 /tmp/rb/lib/make_all.py            # = run_all.py (phases A-D, resumable) + assemble.py + readme.py')
w('python3 /tmp/rb/lib/make_all.py --deadline $(date -d "+2 hours" +%s)   # stop starting new work after a time')
w('```')
w('`run_all.py` skips work units whose result file already exists; delete `/tmp/rb/work` for a clean run. '
  '`run_all.py` also creates its inputs if missing: `/tmp/rb/repo` (clone of the bundle) and `/tmp/rb/trees/<pr>` '
  '(`git -C /tmp/rb/repo archive <sha> | tar -x`). Needs root, `unshare`, overlayfs, tmpfs.')
w('')
w('## Coverage (read this first)')
w('')
w(f'The generator lists {tot_all} single-node points over {len(revs)} revisions. At ~0.3 s (fixed-seq-len) to ~3 s '
  '(agentic) per point on 2 cores, all of them do not fit in the time limit, so points were run in this order, and '
  'the run was stopped at the deadline:')
w('')
w('- **A**: every point of HEAD (#2707, `e976e2e28e`).')
w('- **B**: every other revision: the first point (generator order) of every config key.')
w('- **C**: every other revision: per key, further points (generator order) until every value of every non-`conc` '
  'point field (scenario+isl+osl, tp, ep, dp-attn, spec-decoding, kv-offloading, kv-offload-backend) has been run '
  'at least once.')
w('- **D**: the remaining points, smallest revisions first (so that whole revisions get complete).')
w('')
w(f'Result: {tot_run} of {tot_all} points run; {len(complete)} revisions complete '
  f'({", ".join("#" + str(s["pr"]) for s in complete)}). A missing point is simply absent from the file; every '
  'line present is a real run. The per-revision table below gives points run / listed.')
w('')
w('## Output encoding (`real-launch.jsonl.gz`)')
w('')
w('One JSON object per line. Lines are ordered by PR number (ascending, as in /tmp/gen), then config key (sorted), '
  'then the point\'s position in the generator output. Fields:')
w('')
w('- `pr`, `commit` (first 10 hex), `key` (config key, as /tmp/gen derived it).')
w('- point fields, named and spelled as in /tmp/gen\'s points table: `scenario` (`fixed-seq-len` or '
  '`agentic-coding`), `isl`, `osl` (integers; `""` for agentic), `tp`, `ep`, `conc` (integers), `dp_attn` (boolean), '
  '`spec` (`none` when the generator emits no field, as in /tmp/gen), `kv_offloading` (the `kv-offloading` or, '
  '#1201–#1992, `offloading` value; `""` if absent), `kv_backend` (string or the object\'s `name`; `""` if absent), '
  '`runner` (the generator\'s runner label).')
w('- `exit`: exit status of the workflow step script (the `run:` lines up to and including `bash ./runners/launch_...`, '
  'run with the step\'s shell `bash -e`), i.e. normally the launcher\'s exit status. 124/137 with `timed_out: true` '
  'means the 20 s limit was hit.')
w('- `timed_out` (boolean), `error`: `""` on success, else a cause (see "Failures"); `stderr_tail`: last 800 '
  'characters of the step\'s stderr (bash `set -x` traces included) when `exit != 0`.')
w('- `node`: the runner machine name used as `RUNNER_NAME` (stand-in, see below); `note`: present when the env had '
  'to be derived from a fallback (no caller job for the point, or no runner for the label).')
w('- `calls`: the intercepted invocations, in fork order. Each: `cmd` (the command name as invoked, i.e. basename of '
  'argv[0]), `argv` (arguments after argv[0], in full), `cwd`, `env`, optional `env_unset`.')
w('')
w('**`env` encoding.** Within one (revision, key), all calls of all points (in line order) form one chain. The first '
  'call of the first line of a (revision, key) carries the complete exported environment it received. Every later '
  'call carries only the variables whose value changed or which appeared relative to the previous call in the chain '
  '(which may be in the previous line), and `env_unset` lists variables present in the previous call but absent now. '
  'So to decode: walk the lines of one (pr, key) in file order, keep `cur = {}`; for each call '
  '`cur.update(call.env); for k in call.get("env_unset", []): del cur[k]`; `cur` is then that call\'s full env. '
  'A line\'s first call is therefore a delta against the last call of the previous line of the same key (whose '
  'point differs, e.g. by `CONC`, `RESULT_FILENAME`). Lines for a key are consecutive. If a point made no calls, it '
  'does not advance the chain.')
w('')
w('Dropped from every recorded env (added by the harness or by bash itself, not by the workflow/launcher): `PWD`, '
  '`OLDPWD`, `SHLVL`, `_`; `PATH` when it equals the harness PATH '
  '`/.rb/stubs:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` (kept, verbatim, whenever a script changed '
  'it); `HOME` when it equals the harness value `/home/runner` (launcher side) or `/root` (the docker stand-in image '
  'HOME). No `TMPDIR` is set. Nothing else is removed; runner stand-ins (below) are kept.')
w('')
w('## How it was made')
w('')
w('Code in `/tmp/rb/lib`:')
w('')
w('- `envs.py`: revisions and points from `/tmp/gen` (`revisions.tsv`, `out/*/perkey.json`, single-node = no '
  '`prefill`/`decode`; failed generator revisions #416/#1850 have no points). For each point, the launch step env is '
  'computed with `/tmp/wfo/lib` (`chain`, `caller_job_for`, `caller_inputs`, the GitHub expression evaluator), '
  'exactly as /tmp/wfo does (workflow env → job env → step env → runner runtime override), but instead of replacing the '
  'launcher by `env -0`, the step\'s `run:` text up to and including the `bash ./runners/launch_...` line is kept and '
  'executed for real. Points without a caller job in the full sweep (scheduler era: keys other than dsr1/gptoss) use '
  'a caller job of the same sequence length (noted in `note`).')
w('- `harness.py` + `nsinit.sh`: per point, `timeout -k 3 20 unshare -m -p -f --kill-child --propagation private '
  'nsinit.sh`. nsinit builds a private root on tmpfs: bind mounts of `/usr` (+ `/bin`,`/lib`,`/lib64`,`/sbin` '
  'symlinks), `/etc`, `/dev` (with a private 2000g-limit tmpfs on `/dev/shm`), `/sys` (with a private `/sys/class` '
  'holding the real `net` class and fake `infiniband/mlx5_0..23/ports/1/state` = `4: ACTIVE`), a fresh `/proc` of the '
  'new pid namespace, the Python used for real-python fallbacks (read-only), the vendor stub dir at `/.rb/stubs`, '
  'and a record dir. The revision\'s tree (`/tmp/rb/trees/<pr>`, from `git archive`) is an overlayfs (tmpfs upper) at '
  '`GITHUB_WORKSPACE`. Every absolute directory path literally named in that revision\'s `runners/*.sh` (e.g. '
  '`/var/lib/squash`, `/lustre/fsw/models/...`, HF cache mounts) is pre-created, as on a provisioned runner host. '
  'Everything else (`/tmp`, `/var`, `/mnt`, `/data`, `/scratch`, `/home`, ...) is the empty, writable tmpfs root. Then '
  '`chroot <root> env -i <point env> env -C $GITHUB_WORKSPACE bash -e /runner/_work/_temp/step.sh`. The step '
  'script is the workflow\'s run text with `${{ }}` substituted. All processes die with the namespace.')
w('- `stub.sh` (installed as `.stub.sh` + symlinks per command name in `stubs_nvidia/` or `stubs_amd/`), '
  '`stubs/.docker`, `stubs/.slurm`, `stubs/.container`: the recording stubs. Each stub first appends one record '
  '(`cmd`, `cwd`, argv, then `env -0` of what it received) to `/.rb/rec/<usec>.<pid>.<rand>`, then behaves as below. '
  'Records are ordered by pid (pids in the fresh pid namespace grow with fork order), then time, so background '
  'processes appear where they were started.')
w('- `run_all.py`: phases and parallelism (2 workers, one slot dir each); `assemble.py`: the deliverable; '
  '`readme.py`: this file; `probe.py`/`try1.py`: debugging helpers.')
w('')
w('Trees: `for each revision: mkdir -p /tmp/rb/trees/<pr> && git -C /tmp/rb/repo archive <sha> | tar -x -C /tmp/rb/trees/<pr>`.')
w('')
w('## Stand-ins (values only a real run knows)')
w('')
w('- `RUNNER_NAME` / `${{ runner.name }}`: the **first machine listed for the point\'s runner label** in that '
  'revision\'s `runners.yaml` (e.g. `b200` → `b200-cw_00` at HEAD, `mi355x` → `mi355x-amds_00`). The launcher is '
  'therefore `runners/launch_<that name up to "_">.sh`. If the label has no list (e.g. `b200-dsv4` at #1201, '
  '`h200-dgxc` at HEAD): the label without a `cluster:` prefix + `_0`; such jobs could never be scheduled, and the '
  'launcher usually does not exist (exit 127, cause "launcher script missing").')
w('- `${{ secrets.X }}` → `SECRET_X` (`HF_TOKEN`=`SECRET_HF_TOKEN` or `SECRET_INFERENCEX_OFFICIAL_RO_HF_TOKEN`, '
  '`MODAL_TOKEN_ID`/`SECRET` → `SECRET_MODAL_TOKEN_ID`/`SECRET_MODAL_TOKEN_SECRET`).')
w('- `GITHUB_STEP_SUMMARY` (runner runtime override, see /tmp/wfo) → `/runner/_work/_temp/_runner_file_commands/step_summary_0`; '
  'other `{github.x}` → `GITHUB_X`, other `{runner.x}` → `RUNNER_X`; #258\'s invalid `RUN_EVAL` keeps /tmp/wfo\'s text.')
w('- Runner-provided variables added to the launch step env (the runner puts them in every step): '
  '`GITHUB_WORKSPACE=/runner/_work/InferenceX/InferenceX` (the checkout; cwd of the step), `GITHUB_ACTIONS=true`, '
  '`CI=true`, `RUNNER_TEMP=/runner/_work/_temp`, `GITHUB_ENV=/runner/_work/_temp/_runner_file_commands/set_env_0`, '
  '`USER=runner`. Harness-only (dropped in records): `HOME=/home/runner`, `PATH` (stub dir first).')
w('- GPU facts: 8 GPUs per node; names/memory per label prefix (B200 183359 MiB, B300 275040, GB200, GB300, H100 '
  '81559, H200 143771, RTX PRO 6000, MI300X/MI325X gfx942, MI355X gfx950). NVIDIA nodes have `nvidia-smi` and no '
  '`rocm-smi`/`amd-smi`/`rocminfo`; AMD nodes the reverse (so `command -v nvidia-smi` branches behave).')
w('- Slurm: job ids start at 4001 per point; node name = runner name with `_` → `-`; `nproc` = 128; '
  '`hostname` = runner name.')
w('- Docker: container ids `c0ffee000001`...; container env = `PATH` (stub dir first), `HOME=/root`, '
  '`HOSTNAME=<id or --hostname>` (stand-in image env) + the `-e/--env/--env-file` variables (a bare `-e NAME` copies '
  'the caller\'s value only if set).')
w('')
w('## Stub behaviour')
w('')
w('All stubs record first (except `sleep`/`usleep`, which return at once and are **not recorded**, because polling '
  'loops would make their count timing-dependent). Coreutils, sed, awk, grep, tail, tee, flock, timeout, nohup, '
  'setsid, taskset, ps/pgrep, mount, jq, bc, perl are the real ones.')
w('')
w('| command(s) | behaviour |')
w('|---|---|')
w('| `python`, `python3`, `python3.x` (also venv `bin/python`) | `-m` server modules (`sglang.launch_server`, `sglang_router.*`, `vllm.entrypoints.*`, anything `*launch_server*`/`*api_server*`/`*router*`/`*.serve`/`*_server`, `atom.entrypoints*`, `dynamo.*`, `mooncake*`, `lmcache*`) and `*server*.py`/`*serve*.py`/`*router*.py` scripts: **server** (below). `benchmark_serving.py`/`*bench*.py` and `-m *bench*serv*`/`*benchmark*`/`aiperf*`/`vllm.benchmarks*`: **client** (below). `-m pip/ensurepip/uv/lm_eval`: exit 0. `-m venv D`: creates `D/bin/{activate,python,python3,pip,aiperf,hf,...}` (stubs). `-c CODE`, `-` / stdin heredocs: run by the real Python 3.11 with the same env and cwd; if it fails with ModuleNotFoundError/ImportError, or the code mentions vllm/sglang/tensorrt_llm/torch/aiter/atom/lmcache/mooncake/triton/flashinfer/deep_gemm/transformers/find_spec, it is treated as success (exit 0, its stdout kept). `-m <repo module>` / an existing `.py` file of the checkout: run by the real Python, exit status forced to 0 (they post-process result artifacts a real run would have). Missing file: exit 2 like Python. `--version`: `Python 3.12.3`. |')
w('| server: `vllm serve`, `sglang serve`, `trtllm-serve`, `vllm-router`, `sglang-router`, `mooncake_master`, `lmcache_server`, `lmcache`, `nginx`, `dynamo-run`, `atom-serve`, `torchrun`, python servers | print `Started server process`, `Application startup complete.`, `Uvicorn running on ...`, `The server is fired up and ready to roll!`, then stay alive (real `sleep 100000`, stdout closed) until killed. `--version` prints `0.0.0`. |')
w('| client: benchmark_serving, `vllm bench`, `trtllm-bench`, `lm_eval` | write `{"stub": true}` to `--result-dir/--result-filename` if given; print a short result banner; exit 0. |')
w('| `aiperf` | writes `profile_export_aiperf.json`, `profile_export.jsonl`, `profile_export_aiperf.csv`, `server_metrics_export.{json,csv}` (with `$AIPERF_REQUIRED_SERVER_METRIC_PREFIX` or `vllm:` metric names) into `--output-artifact-dir`/`--artifact-dir`; exit 0. |')
w('| `curl` | exit 0; `-o FILE` creates an empty file; `/v1/models` prints a one-model list, `/v1/completions`/chat a tiny completion, `/health` and `/metrics` nothing. |')
w('| `wget` | exit 0, `-O FILE` creates it. |')
w('| `git` | `clone URL [DIR]` creates `DIR/.git`; `rev-parse` prints zeros / `main` / the cwd; everything else exit 0 silently. |')
w('| `hf`, `huggingface-cli` | `download REPO [--local-dir D]`: creates a complete-looking snapshot (HF cache layout `models--o--n/refs/main` + `snapshots/000...0/` under `--cache-dir`/`$HF_HUB_CACHE`/`$HF_HOME/hub`, or `D`) with `config.json`, `tokenizer_config.json`, `tokenizer.json`, `generation_config.json`, `special_tokens_map.json`, `model.safetensors.index.json` + its one shard, and prints the path. Others exit 0. |')
w('| `pip`, `pip3`, `uv`, `uvx`, `apt-get`, `apt`, `yum`, `dnf`, `conda`, `make`, `cmake`, `ninja`, `gcc`, `g++`, `cc`, `patch`, `gh`, `ssh`, `scp`, `modal`, `srtctl`, `ray`, `ibstat`, `ibv_devinfo`, `rdma`, `nvidia-ctk`, `dcgmi`, `nvcc`, `hipcc`, `mst`, `mlxconfig`, `ldconfig`, `systemctl`, `service`, `mini-extra` | exit 0. `uv venv D` creates a venv like `-m venv`; `uv run [opts] CMD` runs CMD; `pip show`/`uv pip show` print `Version: 0.0.0`. |')
w('| `sbcast SRC DST` | copies the file. `chown`: real chown, errors ignored. |')
w('| `sudo`, `numactl`, `nsys`, `trtllm-llmapi-launch`, `mpirun`/`mpiexec`/`orterun` | wrappers: skip their options (mpirun `-x A=b` exports it) and exec the inner command with the same env. `numactl --hardware` prints 2 nodes. |')
w('| `nvidia-smi` | `-L`: 8 GPUs; `--query-gpu=...` CSV (with header unless `noheader`) for 8 GPUs (index, name, memory.total/free, uuid, compute_cap, ...; other fields 0); `--query-compute-apps`, `-r`, `--gpu-reset`: nothing; `-l` monitor: prints once and exits; bare: a short table. |')
w('| `rocm-smi` | `--showmemuse`: 0% VRAM per GPU; `--showfw`: MEC firmware 177; `--showmeminfo vram --json`; `--showproductname`; `--showpids`: none. `amd-smi`: `--json` → `[]`, `--csv` → a header + one row, `list` → 8 GPUs. `rocminfo`: gfx name per GPU. |')
w('| `hostname` | runner name (`-I`: 10.0.0.1). `nproc`: 128. |')
w('| `enroot` | `import -o F docker://I`: writes F (non-empty); `create`, `list`, `remove`, `version`; `start [--mount s:d] [--env V=x] NAME CMD`: runs CMD in a private mount namespace with the mounts, the caller\'s env plus `--env`. |')
w('| `unsquashfs -l F` | exit 0 if F exists and is non-empty, else 1. |')
w('| `docker`/`podman` | stateful: `run`/`create` (options parsed: `-e/--env/--env-file`, `-v/--volume`, `--mount type=bind`, `-w/--workdir`, `--name`, `--entrypoint`, `-h/--hostname`, `--rm`, `-d`; other options skipped with their value), the command runs in a private mount namespace with the bind mounts, in the workdir (default `/`), with the container env described above; `-d` runs it in the background (own session) and logs to a file; `logs [-f]` prints/follows that log until the container exits; `ps [-a] [-q] [--format] [--filter name=]`, `stop`/`kill`/`rm [-f]` (kill the container\'s process group; `--rm` containers vanish; errors like the real CLI for unknown names / no arguments), `wait`, `exec`, `inspect`, `network`, `images`, `pull`, `version`. |')
w('| `salloc` | creates a job (name from `-J/--job-name`), prints `salloc: Granted job allocation N` on stderr; with a command (no `--no-shell`), runs it with `SLURM_JOB_ID`/`SLURM_JOBID` added, then releases the job. |')
w('| `srun` | runs the command (no task fan-out: once). Env per `--export`: default/`ALL` = caller env; `ALL,A=b` adds; `A,B` only those; `NONE` none (PATH kept so the command can be found). `--container-image` (pyxis): bind mounts from `--container-mounts` (+ `$HOME` with `--container-mount-home`), cwd `--container-workdir` (default `/`); no image env is added. Without a container: cwd `--chdir` or the caller\'s. `PWD`/`OLDPWD` are not passed into containers. |')
w('| `sbatch` | creates a job, prints `Submitted batch job N` (`--parsable`: N); the script is **not** run. |')
w('| `squeue` | lists live jobs, honouring `-j/--jobs`, `-n/--name`, `-h`, `-o/--format` (`%A %i %j %T %t %N %u %P`). `scancel ID`/`--name` removes the job. `scontrol show job/hostnames/node`, `sinfo`, `sacct`: minimal plausible output. |')
w('')
w('## Per revision')
w('')
w('| PR | commit | points listed | points run | keys run/total | exit 0 | non-zero | timeouts |')
w('|---|---|---|---|---|---|---|---|')
for s in revs:
    w(f'| {s["pr"]} | `{s["commit"]}` | {s["points_total"]} | {s["points_run"]} | {s["keys_run"]}/{s["keys_total"]} | '
      f'{s["exit0"]} | {s["nonzero"]} | {s["timeouts"]} |')
w(f'| **all** | | {tot_all} | {tot_run} | | {tot_ok} | {tot_run - tot_ok} | {tot_to} |')
w('')
w('## Failures by cause (all revisions)')
w('')
w('| points | cause | revisions |')
w('|---|---|---|')
for c, n in causes.most_common():
    rv = sorted(cause_revs[c])
    rs = ', '.join('#' + str(x) for x in rv[:12]) + (f' … ({len(rv)} revs)' if len(rv) > 12 else '')
    w(f'| {n} | {c.replace("|", "/")} | {rs} |')
w('')
w('Per revision, the same grouping is in `stats.json` (`causes`). Causes named "other: ..." are the last non-trace '
  'stderr line (digits normalised). Most non-zero exits are genuine properties of the revision under these stand-ins '
  '(missing launcher for the chosen node, missing benchmark script, a script that patches files inside the real '
  'container image), not harness errors; the calls made before the failure are still recorded.')
w('')
w('## Known limits')
w('')
w('- Not every point was run (see Coverage).')
w('- One runner machine per label (the first in `runners.yaml`). Real sweeps spread points over all machines of a '
  'label, and different machines of one label can have different launchers (e.g. `b200-nb_*` vs `b200-cw_*`).')
w('- Container images are not modelled: no image env (ENV, PATH additions, entrypoint) beyond the stand-ins; files '
  'that exist only inside images do not exist (scripts that `sed -i`/`cp`/`patch` such files fail or are no-ops; '
  'Python probes of framework modules are treated as succeeding with empty output).')
w('- Slurm: no `SLURM_*` variables are injected into `srun` steps (only `salloc CMD` gets `SLURM_JOB_ID`/`SLURM_JOBID`); '
  'multi-task steps run once; `sbatch` scripts are not executed; pyxis adds no image env.')
w('- `sleep` is instant and unrecorded; polling loops therefore terminate on the first successful check. Background '
  'processes (servers, monitors) are ordered by fork order (pid), which is deterministic for sequential scripts but '
  'could in principle differ for truly concurrent forks.')
w('- Real-Python fallbacks run with this machine\'s Python 3.11 (PyYAML/pydantic available, no torch/vllm); their '
  'output can differ from the image\'s Python where they depend on installed packages.')
w('- The GitHub runner\'s full default env (e.g. `GITHUB_RUN_ID`, `RUNNER_OS`, `ImageOS`) is not added; only the six '
  'stand-ins listed above.')
w('- Points are run with the step shell `bash -e` (the template sets no `shell:`), in `GITHUB_WORKSPACE`.')
w('- 20 s timeout per point.')
open(f'{OUT}/README.md', 'w').write('\n'.join(L) + '\n')
print('README written', len(L), 'lines')
