#!/bin/bash
# Recording stub for the programs a GPU cluster has (installed as symlinks named after them).
# Record file /.rb/rec/<usec>.<pid>.<rand>, NUL-separated:
#   cmd, cwd, node, rank, where, image (the docker image of a container, else empty), argc, argv..., then `env -0` of the call.
# node/rank/where come from /.rb/id (a per-mount-namespace directory: the runner host,
# the sbatch batch step, each srun task, each docker container), never from the environment.
RB_CMD=${0##*/}
ST=/.rb/state
REAL_PY=/usr/bin/python3

_id() { local v=""; read -r v < "/.rb/id/$1" 2>/dev/null; printf '%s' "$v"; }
_rec() {
    local f=/.rb/rec/${EPOCHREALTIME/./}.$$.$RANDOM
    { printf '%s\0' "$RB_CMD" "$PWD" "$(_id node)" "$(_id rank)" "$(_id where)" "$(_id image)" "$#" "$@"; /usr/bin/env -0; } > "$f.tmp" 2>/dev/null
    /usr/bin/mv -f "$f.tmp" "$f" 2>/dev/null
}
_nodeidx() { local n; n=$(_id node); n=${n##*[!0-9]}; echo "${n:-99}"; }

# ------------------------------------------------------------------ behaviours
_server() {  # long-running server: say it is ready, then stay alive (until the scripts kill it)
    echo "INFO:     Application startup complete."
    echo "The server is fired up and ready to roll!"
    exec /usr/bin/sleep 3600 </dev/null >/dev/null 2>&1
}

_write_result() {  # benchmark client: write a result json where --result-dir/--result-filename say
    local dir="" file="" a prev=""
    for a in "$@"; do
        case "$prev" in --result-dir) dir=$a ;; --result-filename) file=$a ;; esac
        case "$a" in --result-dir=*) dir=${a#*=} ;; --result-filename=*) file=${a#*=} ;; esac
        prev=$a
    done
    if [[ -n "$file" ]]; then
        local p
        if [[ "$file" == /* ]]; then p=$file; else p="${dir:-.}/$file"; fi
        /usr/bin/mkdir -p "$(/usr/bin/dirname "$p")" 2>/dev/null
        echo '{"stub": true}' > "$p" 2>/dev/null
    fi
    echo "============ Serving Benchmark Result ============"
    return 0
}

_real_python() {
    # the real interpreter for programs that read the repository's own files; a program that
    # needs a module only the real image has (torch, transformers, sglang, ...) counts as succeeding
    local err rc
    err=$(/usr/bin/mktemp /tmp/.rbpyerr.XXXXXX)
    "$REAL_PY" "$@" 2>"$err"
    rc=$?
    if (( rc != 0 )) && /usr/bin/grep -qE 'ModuleNotFoundError|ImportError' "$err"; then
        echo "rb-stub: python3 needed a module the image has ($(/usr/bin/grep -oE "No module named '[^']+'" "$err" | /usr/bin/head -1)); treated as success" >&2
        /usr/bin/rm -f "$err"; return 0
    fi
    /usr/bin/cat "$err" >&2; /usr/bin/rm -f "$err"
    return $rc
}

_python() {
    local i=0 n=$# a mod
    local args=("$@")
    while (( i < n )); do
        case "${args[i]}" in
            -u|-B|-E|-s|-S|-O|-OO|-q|-I|-P) i=$((i+1)) ;;
            -W|-X) i=$((i+2)) ;;
            *) break ;;
        esac
    done
    a=${args[i]}
    case "$a" in
        --version|-V) echo "Python 3.12.3"; return 0 ;;
        -m)
            mod=${args[i+1]}
            case "$mod" in
                sglang.launch_server|sglang.launch_server.*|sglang_router*|atom.entrypoints*|vllm.entrypoints*|vllm_router*|mooncake*) _server ;;
                sglang.bench*|vllm.benchmarks*|*benchmark_serving*) _write_result "${args[@]:i+2}"; return 0 ;;
                lm_eval|lm_eval.*|pip|ensurepip|venv) return 0 ;;
            esac
            if [[ -d "${mod%%.*}" || -f "${mod%%.*}.py" ]]; then _real_python "$@"; return $?; fi
            return 0 ;;
        -c|-|"") _real_python "$@"; return $? ;;
        *)
            case "${a##*/}" in
                sync.py) return 0 ;;                        # node barriers: recorded, succeed
                benchmark_serving.py|bench_serving.py) _write_result "${args[@]:i+1}"; return 0 ;;
            esac
            if [[ -f "$a" ]]; then _real_python "$@"; return $?; fi
            echo "python3: can't open file '$a': [Errno 2] No such file or directory" >&2
            return 2 ;;
    esac
}

# ------------------------------------------------------------------ commands
case "$RB_CMD" in
sleep|usleep) exit 0 ;;      # returns at once, not recorded
esac

_rec "$@"

case "$RB_CMD" in
python|python3|python3.*)
    _python "$@"; exit $? ;;
atomesh|vllm-router|sglang-router|mooncake_master|trtllm-serve|atom-serve)
    case "$1" in --version|-V|version) echo "0.0.0"; exit 0 ;; esac
    _server ;;
lm_eval|lm-eval|aiperf)
    _write_result "$@"; exit 0 ;;
uv)
    # `uv venv [opts] DIR` makes a venv whose python/aiperf/hf are these stubs; `uv pip ...` succeeds
    if [[ "$1" == venv ]]; then
        shift; d=""
        while [[ $# -gt 0 ]]; do
            case "$1" in --python|-p|--prompt) shift 2 ;; -*) shift ;; *) d=$1; shift ;; esac
        done
        d=${d:-.venv}
        /usr/bin/mkdir -p "$d/bin"
        for n in python python3 aiperf hf; do /usr/bin/ln -sf /.rb/stubs/.stub.sh "$d/bin/$n"; done
    fi
    exit 0 ;;
sudo)
    while [[ $# -gt 0 ]]; do
        case "$1" in
            -u|-g|-C|-h|-p|-r|-t|-U) shift 2 ;;
            -*) shift ;;
            *=*) export "$1"; shift ;;
            *) break ;;
        esac
    done
    [[ $# -gt 0 ]] && exec "$@"
    exit 0 ;;
whoami)
    echo "runner"; exit 0 ;;
hostname)
    case "$1" in
        -I|-i) echo "10.0.0.$(( $(_nodeidx) + 1 ))" ;;
        *) _id node; echo ;;
    esac
    exit 0 ;;
ip)
    # `ip route get X` -> the node's source address 10.0.0.<node index + 1>; `ip route` -> a default route
    if [[ "$1" == route || "$1" == r || "$1" == ro ]]; then
        if [[ "$2" == get ]]; then
            echo "$3 via 10.0.0.254 dev eth0 src 10.0.0.$(( $(_nodeidx) + 1 )) uid 0"
            echo "    cache"
        else
            echo "default via 10.0.0.254 dev eth0 proto static"
            echo "10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.$(( $(_nodeidx) + 1 ))"
        fi
    fi
    exit 0 ;;
curl)
    out="" wfmt="" url="" prev=""
    for a in "$@"; do
        case "$prev" in -o|--output) out=$a ;; -w|--write-out) wfmt=$a ;; esac
        case "$a" in http://*|https://*) url=$a ;; esac
        prev=$a
    done
    # A health probe of the same URL from the same node: the first answers, later ones find the
    # server gone (the "wait until the router closes" loops of server_atom.sh end).
    if [[ "$url" == */health ]]; then
        key=$(printf '%s|%s' "$(_id node)" "$url" | /usr/bin/md5sum | /usr/bin/cut -c1-16)
        /usr/bin/mkdir -p "$ST/curl"
        if [[ -e "$ST/curl/$key" ]]; then exit 7; fi
        : > "$ST/curl/$key"
    fi
    body='{"object":"list","data":[{"id":"model","object":"model"}],"choices":[{"text":"ok","message":{"content":"ok"}}]}'
    case "$url" in
        # an idle sglang worker answers POST /flush_cache at once (trace_replay.sh's clear_kv_caches)
        */flush_cache) body='Cache flushed.' ;;
        # uv's installer script: puts a `uv` (this stub) into $UV_INSTALL_DIR (benchmark_lib.sh ensure_agentic_uv)
        https://astral.sh/uv/install.sh)
            body='d=${UV_INSTALL_DIR:-$HOME/.local/bin}; mkdir -p "$d" && ln -sf /.rb/stubs/.stub.sh "$d/uv" && echo "installing to $d"' ;;
    esac
    if [[ -n "$out" && "$out" != - ]]; then
        [[ "$out" != /dev/null ]] && { /usr/bin/mkdir -p "$(/usr/bin/dirname "$out")" 2>/dev/null; echo "$body" > "$out"; }
    else
        case "$url" in */v1/*|*/generate|*/flush_cache|https://astral.sh/uv/install.sh) echo "$body" ;; esac
    fi
    [[ "$wfmt" == *'%{http_code}'* ]] && printf '%s' "${wfmt//%\{http_code\}/200}"
    exit 0 ;;
nicctl)
    # AMD Pollara (ionic) NIC tool on the host: QoS with DSCP classification, PFC no-drop priority 3
    # (bitmap 0x8), DSCP 26 -> priority 3 (=> env.sh derives MORI_RDMA_TC=104), DCQCN enabled
    case " $* " in
        *" show qos "*)
            for i in 0 1 2 3 4 5 6 7; do
                echo "NIC  : 00000000-0000-0000-0000-00000000000$i (0000:0$i:00.0)"
                echo "Port : 0400$i"
                echo "  Classification type          : DSCP"
                echo "  DSCP-to-priority :"
                echo "    DSCP                       : 0-25, 27-63 ==> priority : 0"
                echo "    DSCP                       : 26 ==> priority : 3"
                echo "  PFC :"
                echo "    PFC priority bitmap        : 0x8"
                echo "    PFC no-drop priorities     : 3"
            done ;;
        *" show dcqcn "*)
            for i in 0 1 2 3 4 5 6 7; do
                echo "NIC : 00000000-0000-0000-0000-00000000000$i (0000:0$i:00.0)"
                echo "  ROCE device                  : rdma$i"
                echo "    Status                     : Enabled"
                echo "    DSCP value used for CNP    : 46"
            done ;;
        *" show version firmware "*) for i in 0 1 2 3 4 5 6 7; do echo "NIC 0000:0$i:00.0 Firmware version : 1.117.5-a-45"; done ;;
        *" show version host-software "*) echo "nicctl                        : 1.117.5-a-45"; echo "ionic driver                  : 25.08.4.004" ;;
    esac
    exit 0 ;;
ibv_devinfo)
    for i in 0 1 2 3 4 5 6 7; do
        printf 'hca_id:\trdma%s\n\ttransport:\t\t\tInfiniBand (0)\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\n' "$i"
    done
    exit 0 ;;
rocm-smi)
    case " $* " in
        *"--showmemuse"*) for i in 0 1 2 3 4 5 6 7; do printf 'GPU[%s]\t\t: GPU Memory Allocated (VRAM%%): 0\n' "$i"; done ;;
        *"--showproductname"*) for i in 0 1 2 3 4 5 6 7; do printf 'GPU[%s]\t\t: Card Series: \t\tAMD Instinct MI355X\n' "$i"; done ;;
        *"--showpids"*) echo "No KFD PIDs currently running" ;;
        *) for i in 0 1 2 3 4 5 6 7; do printf 'GPU[%s]\t\t: AMD Instinct MI355X\n' "$i"; done ;;
    esac
    exit 0 ;;
amd-smi)
    case " $* " in
        *" --json "*) echo '[]' ;;
        *" list "*) for i in 0 1 2 3 4 5 6 7; do echo "GPU: $i"; done ;;
        *" process "*) : ;;
        *) echo "GPU: 0" ;;
    esac
    exit 0 ;;
rocminfo)
    for i in 0 1 2 3 4 5 6 7; do echo "  Name:                    gfx950"; done; exit 0 ;;
nproc)
    echo 128; exit 0 ;;
docker|podman)
    exec /.rb/stubs/.docker "$@" ;;
sbatch|srun|salloc|squeue|scancel|scontrol|sinfo|sacct)
    exec /.rb/stubs/.slurm "$RB_CMD" "$@" ;;
esac
# pip, git, apt-get, ... : succeed silently
exit 0
