package dryrun

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/testfs"
)

// lib is a small benchmark_lib.sh of the InferenceX shape.
const lib = `
check_env_vars() {
    local missing=()
    for v in "$@"; do [[ -z "${!v:-}" ]] && missing+=("$v"); done
    if [[ ${#missing[@]} -gt 0 ]]; then echo "Error: not set: ${missing[*]}" >&2; exit 1; fi
}
wait_for_server_ready() {
    local log=$2
    while [[ ! -f "$log" ]]; do
        if ! kill -0 "$4" 2>/dev/null; then echo "Process died" >&2; exit 1; fi
        sleep 1
    done
    until curl --silent --fail "http://0.0.0.0:$PORT/health"; do sleep 5; done
}
run_benchmark_serving() { python3 utils/bench_serving/benchmark_serving.py "$@"; }
require_backend() {
    case "$KV_OFFLOADING" in
        none) return 1 ;;
        dram) [[ "$KV_OFFLOAD_BACKEND" == "$1" ]] || { echo "Error: expected KV_OFFLOAD_BACKEND=$1, got '$KV_OFFLOAD_BACKEND'" >&2; exit 1; }; return 0 ;;
        *) echo "Error: unsupported KV_OFFLOADING '$KV_OFFLOADING'" >&2; exit 1 ;;
    esac
}
`

func runScriptT(t *testing.T, script string, env map[string]string) *Launch {
	t.Helper()
	files := testfs.Files{"benchmarks/benchmark_lib.sh": lib, "benchmarks/run.sh": script}
	base := map[string]string{"PATH": "/bin", "MODEL": "m", "TP": "8", "CONC": "4", "PORT": "8888"}
	for k, v := range env {
		base[k] = v
	}
	return Run(context.Background(), files, "benchmarks/run.sh", nil, base, Options{Timeout: 3 * time.Second})
}

const scriptHead = `source "$(dirname "$0")/benchmark_lib.sh"
check_env_vars MODEL TP CONC
`

const scriptTail = `
wait_for_server_ready --server-log /workspace/server.log --server-pid $!
run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC"
echo after the client >&2
exit 3
`

func TestDryRunRecordsTheLaunch(t *testing.T) {
	l := runScriptT(t, scriptHead+`
export SGLANG_USE_AITER=1
ARGS=(--tp "$TP")
if [[ "$DP_ATTENTION" == "true" ]]; then ARGS+=(--enable-dp-attention --dp "$TP"); fi
cat > /workspace/extra.yml <<END
moe_backend: DEEPGEMM
END
python3 -u -m sglang.launch_server --model-path "$MODEL" "${ARGS[@]}" --cuda-graph-max-bs "$CONC" --config extra.yml > /workspace/server.log 2>&1 &
`+scriptTail, map[string]string{"DP_ATTENTION": "true"})
	if l.Status != StatusLaunched || l.Exit != 0 {
		t.Fatalf("status %s exit %d (%s): the run ends when the client starts", l.Status, l.Exit, l.Reason)
	}
	srv := l.Server()
	want := []string{"python3", "-u", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8", "--enable-dp-attention", "--dp", "8", "--cuda-graph-max-bs", "4", "--config", "extra.yml"}
	if !slices.Equal(srv.Argv, want) {
		t.Errorf("argv %q\nwant %q", srv.Argv, want)
	}
	if srv.At != "benchmarks/run.sh:10" {
		t.Errorf("at %s", srv.At)
	}
	if v, ok := srv.Flag("--tp"); !ok || !slices.Equal(v, []string{"8"}) {
		t.Errorf("--tp %v %v", v, ok)
	}
	if v, ok := srv.Flag("--enable-dp-attention"); !ok || len(v) != 0 {
		t.Errorf("--enable-dp-attention %v %v", v, ok)
	}
	if _, ok := srv.Flag("-m"); ok {
		t.Error("the program words are not options")
	}
	if srv.Env["SGLANG_USE_AITER"] != "1" || srv.Env["MODEL"] != "m" {
		t.Errorf("env %v", srv.Env)
	}
	if srv.Files["extra.yml"] != "moe_backend: DEEPGEMM\n" {
		t.Errorf("files %q", srv.Files)
	}
	if len(l.Clients) != 1 || !slices.Contains(l.Clients[0].Argv, "--max-concurrency") {
		t.Errorf("clients %v", l.Clients)
	}
}

func TestDryRunArrayResetAndStray(t *testing.T) {
	l := runScriptT(t, scriptHead+`
ARGS=(--enable-dp-attention)
ARGS+=(--dp 8)
ARGS=(--tp 8)
python3 -m sglang.launch_server "${ARGS[@]}" \ 
  --mem-fraction-static 0.8 > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("%+v", l)
	}
	if _, ok := srv.Flag("--enable-dp-attention"); ok {
		t.Error("an option the array reset dropped is launched")
	}
	if len(srv.Stray) != 1 || srv.Stray[0].Value != " " {
		t.Errorf("stray %+v", srv.Stray)
	}
}

// TestDryRunProcessParams: what only the running shell knows (its pid,
// a random number) reads as unknown, in the script, in a sourced file and
// in bash -c, so that a dry run is the same from run to run; arithmetic
// on it does not break the script (the interpreter reads the unknown
// value as an unset name: 0).
func TestDryRunProcessParams(t *testing.T) {
	files := testfs.Files{
		"benchmarks/benchmark_lib.sh": lib + `RUNTIME_DIR="${TMPDIR:-/tmp}/agentic-${SLURM_JOB_ID:-$$}"; CACHE=/tmp/c.$$ MARK='$$'; LIB_SLOT=$(( $$ % 1 ))` + "\n",
		"benchmarks/run.sh": scriptHead + `
LOG="/tmp/server.$$.${PPID}.log"
(( SLOT = $$ % 1 + LIB_SLOT ))
export SEED=$RANDOM
vllm serve "$MODEL" --dir "$RUNTIME_DIR" --log "$LOG" --cache $CACHE --mark "$MARK" --slot "$SLOT" > /workspace/server.log 2>&1 &
` + scriptTail,
	}
	env := map[string]string{"PATH": "/bin", "MODEL": "m", "TP": "8", "CONC": "4", "PORT": "8888"}
	var first []string
	for range 2 {
		l := Run(context.Background(), files, "benchmarks/run.sh", nil, env, Options{Timeout: 3 * time.Second})
		srv := l.Server()
		if srv == nil {
			t.Fatalf("%s: %s", l.Status, l.Reason)
		}
		got := append(slices.Clone(srv.Argv), srv.Env["SEED"])
		want := []string{"vllm", "serve", "m", "--dir", "/tmp/agentic-<unknown:pid>", "--log", "/tmp/server.<unknown:pid>.<unknown:pid>.log", "--cache", "/tmp/c.<unknown:pid>", "--mark", "$$", "--slot", "0", "<unknown:random>"}
		if !slices.Equal(got, want) {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
		if first != nil && !slices.Equal(first, got) {
			t.Fatalf("the second run differs: %q, then %q", first, got)
		}
		first = got
	}
}

func TestDryRunFailsBeforeTheServer(t *testing.T) {
	script := scriptHead + `
if require_backend lmcache; then ARGS=(--lmcache); fi
vllm serve "$MODEL" "${ARGS[@]}" > /workspace/server.log 2>&1 &
` + scriptTail
	l := runScriptT(t, script, map[string]string{"KV_OFFLOADING": "dram", "KV_OFFLOAD_BACKEND": "native"})
	if l.Status != StatusFailed || l.Exit != 1 || len(l.Servers) != 0 {
		t.Fatalf("%+v", l)
	}
	if l.EndedAt != "benchmarks/benchmark_lib.sh:19" || !strings.Contains(l.Reason, "expected KV_OFFLOAD_BACKEND=lmcache") {
		t.Errorf("ended at %s: %s", l.EndedAt, l.Reason)
	}
	l = runScriptT(t, script, map[string]string{"KV_OFFLOADING": "dram", "KV_OFFLOAD_BACKEND": "lmcache"})
	if srv := l.Server(); srv == nil || !slices.Contains(srv.Argv, "--lmcache") {
		t.Errorf("%+v", l)
	}
}

// TestDryRunUnmappedVariable: a script that stops because a variable the
// workflow environment does not have at all is missing (an older
// workflow's name) is unknown, not failed; one the launcher failed to
// pass on is a failure.
func TestDryRunUnmappedVariable(t *testing.T) {
	l := runScriptT(t, scriptHead+"check_env_vars OFFLOADING\nvllm serve m\n", nil)
	if l.Status != StatusUnknown || !strings.Contains(l.Reason, "needs OFFLOADING") {
		t.Errorf("%s: %s", l.Status, l.Reason)
	}
	l = runScriptT(t, scriptHead+"unset TP; check_env_vars TP\nvllm serve m\n", nil)
	if l.Status != StatusFailed || !strings.Contains(l.Reason, "not set: TP") {
		t.Errorf("%s: %s", l.Status, l.Reason)
	}
}

// TestDryRunFailureThenLauncherCheck: a script that exits on a
// concurrency it does not support fails there, with what it said, though
// the launcher checks something the sandbox cannot run afterwards (ls
// for core files) and echoes; a check right before the exit still makes
// it unknown.
func TestDryRunFailureThenLauncherCheck(t *testing.T) {
	files := testfs.Files{
		"benchmarks/benchmark_lib.sh": lib,
		"runners/launch_x.sh": `srun --jobid=1 bash benchmarks/single_node/s.sh
rc=$?
if ls gpucore.* 1> /dev/null 2>&1; then
    echo "gpucore files exist. not good" >&2
fi
exit "$rc"
`,
		"benchmarks/single_node/s.sh": `case "$CONC" in
    4) MAX=8 ;;
    *) echo "Unsupported CONC=$CONC" >&2; exit 2 ;;
esac
vllm serve m --max-num-seqs $MAX
`,
	}
	l := Run(context.Background(), files, "runners/launch_x.sh", nil, map[string]string{"CONC": "2"}, Options{})
	if l.Status != StatusFailed || l.Exit != 2 || l.EndedAt != "benchmarks/single_node/s.sh:3" || l.Reason != "Unsupported CONC=2" {
		t.Errorf("%s exit %d at %s: %q; want failed, exit 2 at s.sh:3, Unsupported CONC=2", l.Status, l.Exit, l.EndedAt, l.Reason)
	}
	// the check before the exit decides it: not known
	files["benchmarks/single_node/s.sh"] = "if ls /opt/engine/*.whl >/dev/null 2>&1; then echo 'engine wheel present' >&2; exit 3; fi\nvllm serve m\n"
	l = Run(context.Background(), files, "runners/launch_x.sh", nil, map[string]string{"CONC": "2"}, Options{})
	if l.Status != StatusUnknown || !strings.Contains(l.Reason, "decided by ls") {
		t.Errorf("%s: %q; want unknown, decided by ls", l.Status, l.Reason)
	}
}

// TestDryRunLauncherChain: a launcher runs the script behind srun and
// docker; the container sees only the environment docker passes.
func TestDryRunLauncherChain(t *testing.T) {
	files := testfs.Files{
		"benchmarks/benchmark_lib.sh": lib,
		"runners/launch_x.sh": `export PORT=8000 SECRET=host-only
JOB_ID=$(squeue --name x -h -o %A)
if [ -z "$JOB_ID" ]; then echo "no job" >&2; exit 1; fi
srun --jobid=$JOB_ID bash -c "docker stop \$(docker ps -a -q)"
docker run --rm --workdir=/workspace/ --env MODEL --env PORT -e TP=4 img bash benchmarks/single_node/s.sh
`,
		"benchmarks/single_node/s.sh": `source "$(dirname "$0")/../benchmark_lib.sh"
trtllm-serve "$MODEL" --tp_size="$TP" --port=$PORT --secret="${SECRET:-}" > /workspace/server.log 2>&1 &
` + scriptTail,
	}
	l := Run(context.Background(), files, "runners/launch_x.sh", nil, map[string]string{"MODEL": "m", "TP": "8"}, Options{})
	srv := l.Server()
	if srv == nil {
		t.Fatalf("%+v", l)
	}
	if v, _ := srv.Flag("--tp-size"); !slices.Equal(v, []string{"4"}) {
		t.Errorf("--tp_size %v", v)
	}
	if v, _ := srv.Flag("--secret"); !slices.Equal(v, []string{""}) {
		t.Errorf("the container saw the host's SECRET: %v", v)
	}
	if srv.At != "benchmarks/single_node/s.sh:2" || srv.Env["PORT"] != "8000" {
		t.Errorf("at %s env %v", srv.At, srv.Env)
	}
	if !slices.Contains(l.Stubbed, "squeue") || !slices.Contains(l.Stubbed, "docker") {
		t.Errorf("stubbed %v", l.Stubbed)
	}
}

// TestDryRunBadInput: what a script cannot do in the sandbox ends as
// unknown with a reason; nothing outside the tree is read or written,
// nothing is executed, nothing hangs.
func TestDryRunBadInput(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "keep")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(t.TempDir(), "written")
	for _, c := range []struct {
		name, script string
		status       string
		why          string
	}{
		{"loop", "while true; do :; done\nvllm serve m > /workspace/server.log &\n", StatusLaunched, "loop stopped after"},
		{"silent loop", "x=0; until false; do x=1; done\nvllm serve m > /workspace/server.log &\n", StatusLaunched, "loop stopped after"},
		{"silent loop in a sourced file", "source benchmarks/loop.sh\n", StatusUnknown, "a loop that does not end"},
		{"interpreter limit", "shopt -s nosuchopt\nvllm serve m\n", StatusLaunched, ""},
		{"fork bomb", "f() { f | f & }; f\n", StatusUnknown, ""},
		{"deep recursion", "f() { f; }; f\n", StatusUnknown, ""},
		{"scripts run each other", "bash benchmarks/run.sh\n", StatusUnknown, "deeper than"},
		{"rm -rf", "rm -rf / " + outside + "\nvllm serve m > /workspace/server.log &\n", StatusLaunched, "outside the tree, not run"},
		{"writes", "echo secret > " + written + "\nvllm serve m > /workspace/server.log &\n", StatusLaunched, ""},
		{"missing source", "source ./nope.sh\nvllm serve m > /workspace/server.log &\n", StatusLaunched, ""},
		{"unsupported bash", "coproc foo { true; }\n", StatusUnknown, "does not read"},
		{"fd redirect", "exec 9>/tmp/lock; vllm serve m > /workspace/server.log &\n", StatusLaunched, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			files := testfs.Files{"benchmarks/benchmark_lib.sh": lib, "benchmarks/run.sh": c.script,
				"benchmarks/loop.sh": "until false; do x=1; done\n"}
			l := Run(context.Background(), files, "benchmarks/run.sh", nil, map[string]string{"PATH": "/bin"},
				Options{Timeout: 500 * time.Millisecond, MaxSteps: 20000})
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			if l.Status != c.status {
				t.Errorf("status %s (%s), want %s", l.Status, l.Reason, c.status)
			}
			text := []string{l.Reason}
			for _, u := range l.Unknowns {
				text = append(text, u.What)
			}
			if c.why != "" && !strings.Contains(strings.Join(text, "\n"), c.why) {
				t.Errorf("why: %q, want %q", text, c.why)
			}
		})
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("rm -rf ran: %v", err)
	}
	if _, err := os.Stat(written); err == nil {
		t.Error("a write reached the file system")
	}
	l := Run(context.Background(), testfs.Files{"run.sh": "U=$(cat /etc/passwd)\nvllm serve \"x$U\"\n"}, "run.sh", nil, nil, Options{})
	if srv := l.Server(); srv == nil || srv.Argv[2] != "x" {
		t.Errorf("a file outside the tree was read: %+v", l)
	}
	if len(l.Unknowns) == 0 || !strings.Contains(l.Unknowns[0].What, "/etc/passwd") {
		t.Errorf("unknowns %v", l.Unknowns)
	}
}

// FuzzDryRun: any script ends, bounded, without a panic, with a status,
// and never reaches the file system: it runs in a spying worker, which
// dies on any file-system system call (and the run says so).
func FuzzDryRun(f *testing.F) {
	for _, s := range []string{
		"vllm serve m --tp 8 &\nwait $!\n",
		"while :; do :; done",
		"f() { f | f & }; f",
		"source ./x.sh; cat /etc/passwd > /workspace/y; exec 9>/tmp/l; trap 'echo' INT",
		"docker run --rm -e A=1 img bash -c 'python3 -m sglang.launch_server --tp $A'",
		"A=(); A+=(--x); A=(--y); printf '%q %.2f' \"${A[@]}\" 1; set -euxo pipefail; kill -0 $$",
		"coproc x { :; }",
		"$(< /proc/self/environ) ${BASH_SOURCE[0]} <(ls) >(cat)",
		"eval 'cat <(:)'; trap 'cat <(:)' EXIT; type python3; command -v nvidia-smi; hash ls; echo ~root ~nobody",
		"[[ -O /etc/passwd ]]; test -G /etc; cd /etc && echo *; mapfile -t A < /etc/hostname; source /etc/os-release",
		"export TMPDIR=/tmp; echo x > $TMPDIR/sh-interp-x; cat < /tmp/sh-interp-y; bash -c 'cat <(:)'",
	} {
		f.Add(s)
	}
	sb := confined(f, true)
	// every input is run: the fuzzer's many budget stops must not spend
	// the command's stopped budget (StoppedBudget), which would answer
	// the rest without running them
	sb.stoppedLimit = math.MaxInt64
	f.Fuzz(func(t *testing.T, script string) {
		files := testfs.Files{"run.sh": script, "x.sh": "y=1\n"}
		start := time.Now()
		l := sb.Run(context.Background(), files, "run.sh", nil, map[string]string{"PATH": "/bin"},
			Options{Timeout: 200 * time.Millisecond, MaxSteps: 5000, Memory: 128 << 20})
		if strings.Contains(l.Reason, "system call") {
			t.Fatalf("the interpreter reached the file system: %s", l.Reason)
		}
		if strings.HasPrefix(l.Reason, "not run:") {
			t.Fatalf("not run: %s", l.Reason)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
		switch l.Status {
		case StatusLaunched, StatusFailed, StatusNoServer, StatusUnknown:
		default:
			t.Errorf("status %q", l.Status)
		}
	})
}

// TestDryRunAssociativeKeys: a table keyed by the point's parameters
// (minimaxm3_fp4_b200_mtp.sh, July 2026) launches its value. mvdan.cc/sh
// parses [1024:4:4:false:4]=4 and ${M[$ISL:$TP]} as arithmetic and
// refused the script ("bash the interpreter does not read"); a key the
// table lacks takes the default, in the script and in a sourced file.
func TestDryRunAssociativeKeys(t *testing.T) {
	table := `declare -A NUM_SPEC_TOKENS_MAP=(
  # --- ISL=1024 / OSL=1024 ---
  [1024:8:1:false:4]=4
  [1024:8:1:false:8]=6
)
NUM_SPEC_TOKENS="${NUM_SPEC_TOKENS_MAP[${ISL}:${TP}:${EP_SIZE}:${DP_ATTENTION}:${CONC}]:-3}"
`
	for _, c := range []struct {
		conc, want string
	}{{"4", "4"}, {"8", "6"}, {"16", "3"}} {
		env := map[string]string{"ISL": "1024", "EP_SIZE": "1", "DP_ATTENTION": "false", "CONC": c.conc}
		l := runScriptT(t, scriptHead+table+`
python3 -m sglang.launch_server --model-path "$MODEL" --speculative-num-steps "$NUM_SPEC_TOKENS" > /workspace/server.log 2>&1 &
`+scriptTail, env)
		srv := l.Server()
		if l.Status != StatusLaunched || srv == nil {
			t.Fatalf("conc %s: %s: %s", c.conc, l.Status, l.Reason)
		}
		if v, _ := srv.Flag("--speculative-num-steps"); !slices.Equal(v, []string{c.want}) {
			t.Errorf("conc %s: --speculative-num-steps %v, want %s", c.conc, v, c.want)
		}
	}
	files := testfs.Files{"benchmarks/benchmark_lib.sh": lib, "benchmarks/table.sh": table,
		"benchmarks/run.sh": scriptHead + `source "$(dirname "$0")/table.sh"
python3 -m sglang.launch_server --speculative-num-steps "$NUM_SPEC_TOKENS" > /workspace/server.log 2>&1 &
` + scriptTail}
	env := map[string]string{"PATH": "/bin", "MODEL": "m", "TP": "8", "CONC": "8", "PORT": "8888", "ISL": "1024", "EP_SIZE": "1", "DP_ATTENTION": "false"}
	l := Run(context.Background(), files, "benchmarks/run.sh", nil, env, Options{Timeout: 3 * time.Second})
	if srv := l.Server(); srv == nil {
		t.Fatalf("sourced: %s: %s", l.Status, l.Reason)
	} else if v, _ := srv.Flag("--speculative-num-steps"); !slices.Equal(v, []string{"6"}) {
		t.Errorf("sourced: --speculative-num-steps %v, want 6", v)
	}
}

// TestDryRunAssociativeKeysNearTheEnd: the keys quoted for the parser
// make the text it reads longer than the file; a table of many keys
// shortly before the end of the script (minimaxm3_fp4_b300_mtp.sh, July
// 2026, 16 keys) put a statement past the file's end, and signing the
// script's code failed ("the interpreter failed: slice bounds out of
// range"). The code is signed over the text parsed.
func TestDryRunAssociativeKeysNearTheEnd(t *testing.T) {
	var table strings.Builder
	table.WriteString("declare -A M=(\n")
	for i := range 16 {
		fmt.Fprintf(&table, "  [1024:%d:1:false:4]=%d\n", i, i)
	}
	table.WriteString(")\nV=\"${M[${ISL}:${TP}:1:false:${CONC}]:-3}\"\n")
	files := testfs.Files{"benchmarks/benchmark_lib.sh": lib,
		"benchmarks/run.sh": table.String() + "vllm serve m --v \"$V\" &\nwait\n"}
	env := map[string]string{"PATH": "/bin", "TP": "7", "CONC": "4", "ISL": "1024"}
	for range 2 { // the second run reads the signed code from the cache
		l := Run(context.Background(), files, "benchmarks/run.sh", nil, env, Options{Timeout: 3 * time.Second})
		if srv := l.Server(); srv == nil {
			t.Fatalf("%s: %s", l.Status, l.Reason)
		} else if v, _ := srv.Flag("--v"); !slices.Equal(v, []string{"7"}) {
			t.Errorf("--v %v, want 7", v)
		}
	}
}

// TestDryRunScriptName: $0, ${BASH_SOURCE[0]} and what dirname makes of
// them are what bash gives a script a launcher runs from the workspace,
// `bash benchmarks/single_node/x/run.sh`: that path, in a background
// server command too (the interpreter lost $0 there: "gosh"), and
// dirname's "benchmarks/single_node/x", not ".".
func TestDryRunScriptName(t *testing.T) {
	files := testfs.Files{"benchmarks/benchmark_lib.sh": lib, "runners/l.sh": "bash \"benchmarks/single_node/x/run.sh\"\n",
		"benchmarks/single_node/x/run.sh": "python3 -m sglang.launch_server --chat-template \"$(dirname \"$0\")/../t.jinja\" --a \"$0\" --b \"${BASH_SOURCE[0]}\" > /workspace/server.log 2>&1 &\n"}
	l := Run(context.Background(), files, "runners/l.sh", nil, map[string]string{"PATH": "/bin"}, Options{Timeout: 3 * time.Second})
	srv := l.Server()
	if srv == nil {
		t.Fatalf("%s: %s", l.Status, l.Reason)
	}
	want := []string{"python3", "-m", "sglang.launch_server", "--chat-template", "benchmarks/single_node/x/../t.jinja",
		"--a", "benchmarks/single_node/x/run.sh", "--b", "benchmarks/single_node/x/run.sh"}
	if !slices.Equal(srv.Argv, want) {
		t.Errorf("argv %q\nwant %q", srv.Argv, want)
	}
}

// TestDryRunIdleGPUs: a launcher's guard against a busy machine passes,
// as it does on a machine fit to run the point (the real-bash oracle's
// runs at #185..#1020); other nvidia-smi output stays unknown.
func TestDryRunIdleGPUs(t *testing.T) {
	script := scriptHead + `
if nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q '[0-9]'; then
  echo "[ERROR] GPU busy from previous run"; exit 1
fi
GPUS=$(nvidia-smi -L | wc -l)
vllm serve "$MODEL" --tp "$GPUS" > /workspace/server.log 2>&1 &
` + scriptTail
	l := runScriptT(t, script, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("the guard stopped the run: %+v", l)
	}
	if v, _ := srv.Flag("--tp"); len(v) != 1 || !strings.Contains(v[0], UnknownMarker) {
		t.Errorf("the GPU count is what a machine says: %v", v)
	}
}

// TestDryRunUnknownBranch: what a branch sets is unknown when its test
// read a value the sandbox does not know (a firmware version from
// rocm-smi); a test of known values decides as bash would.
func TestDryRunUnknownBranch(t *testing.T) {
	script := scriptHead + `
MAX_MODEL_LEN=262144
version=$(rocm-smi --showfw | grep MEC | head -n 1 | awk '{print $NF}')
if [[ "$version" == "" || $version -lt 177 ]]; then
  export HSA_NO_SCRATCH_RECLAIM=1
  EXTRA="--scratch-off"
else
  export FW_OK=1
fi
if [ "$TP" = 8 ]; then
  export TP_IS_8=1
else
  export TP_IS_NOT_8=1
fi
vllm serve "$MODEL" $EXTRA > /workspace/server.log 2>&1 &
` + scriptTail
	l := runScriptT(t, script, map[string]string{"MAX_MODEL_LEN": "0"})
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %+v", l)
	}
	if v := srv.Env["MAX_MODEL_LEN"]; v != "262144" {
		t.Errorf("a variable set before the branch: MAX_MODEL_LEN=%q, want 262144", v)
	}
	if v := srv.Env["HSA_NO_SCRATCH_RECLAIM"]; !strings.Contains(v, UnknownMarker) {
		t.Errorf("HSA_NO_SCRATCH_RECLAIM=%q, want unknown", v)
	}
	if v := srv.Env["FW_OK"]; !strings.Contains(v, UnknownMarker) {
		// the branch not taken may be the machine's: what it exports
		// is unknown, not absent (nor 1: it did not run)
		t.Errorf("FW_OK=%q, want unknown", v)
	}
	if strings.Join(srv.Argv, " ") != "vllm serve m --scratch-off" {
		// a shell variable the branch set stays as set: such variables
		// decide guards ("GPU_CLEAN=true; break"), and the dry run is of
		// a machine fit to run the point
		t.Errorf("argv %q", srv.Argv)
	}
	if srv.Env["TP_IS_8"] != "1" {
		t.Errorf("a test of known values: TP_IS_8=%q, want 1", srv.Env["TP_IS_8"])
	}
	if _, found := srv.Env["TP_IS_NOT_8"]; found {
		t.Errorf("the branch not taken ran: %v", srv.Env)
	}
	found := false
	for _, u := range l.Unknowns {
		found = found || strings.Contains(u.What, "decides this branch")
	}
	if !found {
		t.Errorf("the unknown branch is not said: %+v", l.Unknowns)
	}
}

// TestDryRunUntakenBranch: the branch of a test of an unknown value
// that the dry run did not take may be the one the machine takes: what
// it would add to a launch (options appended, a NAME=VALUE for the
// server's environment, an export) is unknown, never absent. Other
// shell variables it sets are left alone.
func TestDryRunUntakenBranch(t *testing.T) {
	const settings = `tbo=$(python3 -c 'print(cfg["tbo"])')
FLAGS="--tp $TP"
ARGS=(--port 1)
GUARD=ok
if [[ "$tbo" == "True" ]]; then
    FLAGS="$FLAGS --enable-two-batch-overlap"
    ARGS+=(--x)
    SDMA_ENV="MORI_ENABLE_SDMA=true"
    export TBO_ON=1
    GUARD=bad
fi
`
	const launch = `[ "$GUARD" = ok ] || exit 1
CMD="A=1 ${SDMA_ENV:-} python3 -m sglang.launch_server $FLAGS ${ARGS[*]}"
eval "$CMD" > /workspace/server.log 2>&1 &
`
	// (a sourced file's branches are not tracked: the text edits that did
	// it cost every dry run half again, and lost a client; see
	// docs/dev/launch-oracle.md)
	checkUntaken(t, runScriptT(t, scriptHead+settings+launch+scriptTail, nil), "benchmarks/run.sh:7")
}

func checkUntaken(t *testing.T, l *Launch, at string) {
	t.Helper()
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %s %s %+v", l.Status, l.Reason, l.Unknowns)
	}
	said := false
	for _, u := range l.Unknowns {
		said = said || (u.At == at && strings.Contains(u.What, "decides this branch"))
	}
	if !said {
		t.Errorf("the branch at %s is not said: %+v", at, l.Unknowns)
	}
	// the options stay where the branch puts them, each marked unknown
	if got, want := strings.Join(srv.Argv, " "), "python3 -m sglang.launch_server --tp 8 --enable-two-batch-overlap <unknown:python3> --port 1 --x <unknown:python3>"; got != want {
		t.Errorf("argv %q\nwant %q", got, want)
	}
	if v, _ := srv.Flag("--tp"); strings.Join(v, " ") != "8" {
		t.Errorf("--tp %q: an option before the branch's keeps its value", v)
	}
	for _, name := range []string{"MORI_ENABLE_SDMA", "TBO_ON"} {
		if v := srv.Env[name]; !strings.Contains(v, UnknownMarker) {
			t.Errorf("%s=%q, want unknown", name, v)
		}
	}
	if srv.Env["A"] != "1" {
		t.Errorf("env %v", srv.Env)
	}
}

// TestDryRunUnknownBranchGuard: a guard that waits for idle GPUs (a
// shell variable set in a branch on what rocm-smi says) passes, as on a
// machine fit to run the point.
func TestDryRunUnknownBranchGuard(t *testing.T) {
	script := scriptHead + `
GPU_CLEAN=false
for i in $(seq 1 3); do
    VRAM_MAX=$(rocm-smi --showmemuse 2>/dev/null | grep -oE "VRAM%: [0-9]+" | awk '{if ($NF > m) m = $NF} END {print m+0}')
    if [ "${VRAM_MAX:-0}" -le 10 ]; then echo "GPUs clean"; GPU_CLEAN=true; break; fi
    sleep 10
done
[ "$GPU_CLEAN" = "true" ] || { echo "Error: GPUs still draining" >&2; exit 1; }
vllm serve "$MODEL" > /workspace/server.log 2>&1 &
` + scriptTail
	if l := runScriptT(t, script, nil); l.Server() == nil {
		t.Errorf("the idle-GPU guard stopped the run: %s %+v", l.Status, l.Unknowns)
	}
}

// TestErrexitAgainstRealBash: under set -e, a compound command whose
// body ends in a failing && list goes on in bash (a function's call does
// not); the dry run goes on where bash does.
func TestErrexitAgainstRealBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	for _, body := range []string{
		"X=1\n",
		"[ 8 -lt 1 ] && X=1\n",
		"if true; then\n [ 8 -lt 1 ] && X=1\nfi\n",
		"if false; then :; else [ 8 -lt 1 ] && X=1; fi\n",
		"f() { [ 8 -lt 1 ] && X=1; }\nf\n",
		"{ [ 8 -lt 1 ] && X=1; }\n",
		"for i in 1; do [ 8 -lt 1 ] && X=1; done\n",
		"case a in a) [ 8 -lt 1 ] && X=1 ;; esac\n",
		"if true; then false; fi\n",
		"true && false\n",
		// a function whose last command is such a compound returns the
		// list's status: the call exits, unless it is tested
		"f() {\n if true; then\n  [ 8 -lt 1 ] && X=1\n fi\n}\nf\n",
		"f() { if [[ 8 -lt 1 ]]; then :; else [ 8 -lt 1 ] && X=1; fi; }\nf\n",
		"f() { for i in 1 2; do [ $i -lt 2 ] && X=1; done; }\nf\n",
		"f() { for i in 2 1; do [ $i -lt 2 ] && X=1; done; }\nf\n",
		"f() { for i in 1 2; do if [ $i = 1 ]; then [ 8 -lt 1 ] && X=1; fi; done; }\nf\n",
		"f() { case a in a) { [ 8 -lt 1 ] && X=1; } ;; esac; }\nf\n",
		"f() { if true; then [ 8 -lt 1 ] && X=1; fi; }\nf || true\n",
		"f() { if true; then [ 8 -lt 1 ] && X=1; fi; }\nif f; then :; fi\n",
		"f() { if true; then [ 8 -lt 1 ] && X=1; fi; echo; }\nf\n",
		"f() { if true; then [ 1 -lt 8 ] && X=1; fi; }\nf\n",
	} {
		out, _ := onMachine(t, bash, []string{"-c", "set -e\n" + body + "echo reached"}, "")
		want := strings.Contains(string(out), "reached")
		script := scriptHead + "set -e\n" + body + `vllm serve "$MODEL" > /workspace/server.log 2>&1 &
` + scriptTail
		if got := runScriptT(t, script, nil).Server() != nil; got != want {
			t.Errorf("set -e; %q: the dry run goes on %v, bash %v", body, got, want)
		}
	}
}

// TestErrexitStatusIsNotExported: the status a rewritten function keeps is
// the dry run's own; under set -a it reaches no server.
func TestErrexitStatusIsNotExported(t *testing.T) {
	script := scriptHead + "set -a\nf() { if true; then [ 1 -lt 8 ] && X=1; fi; }\nf\n" +
		`vllm serve "$MODEL" > /workspace/server.log 2>&1 &
` + scriptTail
	srv := runScriptT(t, script, nil).Server()
	if srv == nil {
		t.Fatal("no server launched")
	}
	if srv.Env["X"] != "1" {
		t.Errorf("X = %q, want 1 (exported by set -a)", srv.Env["X"])
	}
	for k := range srv.Env {
		if strings.HasPrefix(k, "PERFLOG") {
			t.Errorf("the server starts with the dry run's %s", k)
		}
	}
}

// TestEnvAt: each variable a server starts with is said with the
// file:line that exported its value: an export of the script, of a file
// it sources (found by position), declare -x, a wrapper's
// --export=ALL,K=V; not one whose value an assignment changed after.
func TestEnvAt(t *testing.T) {
	files := testfs.Files{
		"benchmarks/lib.sh": `#!/bin/bash
helper() { :; }
export LIB_VAR=1
declare -x LIB_DECL=7
`,
		"benchmarks/outer.sh": `#!/bin/bash
export OUTER=1
srun --export=ALL,WRAPPED=2 bash benchmarks/run.sh
`,
		"benchmarks/run.sh": `#!/bin/bash
source "$(dirname "$0")/lib.sh"
export A=1
B=2
export B
declare -x C=3
export D=4
D=5
local_f() { export IN_F=6; }
local_f
python3 -m sglang.launch_server --model-path "$MODEL" > /workspace/server.log 2>&1 &
wait $!
`,
	}
	// twice in one sandbox: the second run calls lib.sh as the function
	// the first parsed (sourcedFunc), whose top-level declare stays global
	sb := InProcess()
	var l *Launch
	for range 2 {
		l = Run(context.Background(), files, "benchmarks/outer.sh", nil, map[string]string{"PATH": "/bin", "MODEL": "m"}, Options{Timeout: 3 * time.Second, Sandbox: sb})
		if len(l.Servers) != 1 {
			t.Fatalf("status %s (%s): %d servers", l.Status, l.Reason, len(l.Servers))
		}
		if l.Servers[0].Env["LIB_DECL"] != "7" || l.Servers[0].EnvAt["LIB_DECL"] != "benchmarks/lib.sh:4" {
			t.Errorf("LIB_DECL=%q at %q, want 7 at benchmarks/lib.sh:4", l.Servers[0].Env["LIB_DECL"], l.Servers[0].EnvAt["LIB_DECL"])
		}
	}
	want := map[string]string{
		"OUTER":   "benchmarks/outer.sh:2",
		"WRAPPED": "benchmarks/outer.sh:3",
		"LIB_VAR": "benchmarks/lib.sh:3",
		"A":       "benchmarks/run.sh:3",
		"B":       "benchmarks/run.sh:5",
		"C":       "benchmarks/run.sh:6",
		"IN_F":    "benchmarks/run.sh:9",
	}
	got := l.Servers[0].EnvAt
	for k, v := range want {
		if got[k] != v {
			t.Errorf("EnvAt[%s] = %q, want %q", k, got[k], v)
		}
	}
	if at, ok := got["D"]; ok || l.Servers[0].Env["D"] != "5" {
		t.Errorf("D (exported as 4, then assigned 5) is said at %q; its value %q", at, l.Servers[0].Env["D"])
	}
	if _, ok := got["MODEL"]; ok {
		t.Error("MODEL (the workflow's) is said at a line of the scripts")
	}
}

// TestEvalLaunchIsPlacedAtTheEval: a server started by eval is said to
// start on the eval's line, and of two evals whose code starts alike (one
// per role), at its own.
func TestEvalLaunchIsPlacedAtTheEval(t *testing.T) {
	l := runScriptT(t, scriptHead+`
PRE="python3 -m sglang.launch_server --disaggregation-mode prefill --tp $TP"
DEC="python3 -m sglang.launch_server --disaggregation-mode decode --tp $TP"
eval "$DEC" \
  > /workspace/decode.log 2>&1 &
eval "$PRE" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	if len(l.Servers) != 2 {
		t.Fatalf("servers %d (%s: %s)", len(l.Servers), l.Status, l.Reason)
	}
	for _, s := range l.Servers {
		mode, _ := s.Flag("--disaggregation-mode")
		want := map[string]string{"decode": "benchmarks/run.sh:6", "prefill": "benchmarks/run.sh:8"}[strings.Join(mode, "")]
		if s.At != want {
			t.Errorf("%s server at %q, want %q", mode, s.At, want)
		}
	}
}

// TestUnknownInCodeAssignment: an unknown value in code run by bash -c,
// as a variable's value for the command, stays the marker (real bash
// removes the quoting inertMarkers adds; so does the dry run).
func TestUnknownInCodeAssignment(t *testing.T) {
	l := runScriptT(t, scriptHead+`
V=$(python3 -c 'print(1)')
CMD="A=1 B=$V python3 -m sglang.launch_server --x=$V"
bash -c "$CMD" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %s %s", l.Status, l.Reason)
	}
	if got := srv.Env["B"]; got != "<unknown:python3>" {
		t.Errorf("B=%q, want the marker", got)
	}
	if v, _ := srv.Flag("--x"); strings.Join(v, "") != "<unknown:python3>" {
		t.Errorf("--x %q", v)
	}
}

// TestDryRunUntakenBranchRunsNothing: text a branch not taken holds in
// single quotes is not run when its settings are said unknown.
func TestDryRunUntakenBranchRunsNothing(t *testing.T) {
	l := runScriptT(t, scriptHead+`
v=$(python3 -c 'print(1)')
ARGS=(--a)
if [[ "$v" == "x" ]]; then ARGS+=('--b=$(touch /workspace/ran)'); fi
[ -e /workspace/ran ] && exit 7
vllm serve m "${ARGS[@]}" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	if srv := l.Server(); srv == nil || slices.Contains(srv.Argv, "--b=") {
		t.Fatalf("%s %s %+v", l.Status, l.Reason, srv)
	}
}

// TestDryRunUntakenElse: of two branches that set the same variable, the
// one taken keeps its setting, and what the other's adds to it follows,
// unknown (an option both set alike is not said twice).
func TestDryRunUntakenElse(t *testing.T) {
	l := runScriptT(t, scriptHead+`
v=$(python3 -c 'print(1)')
if [[ -n "$v" ]]; then
    EXTRA="--a 1 --c 3"
    PAIR="A_X=1"
else
    EXTRA="--a 1 --b 2"
    PAIR="B_Y=2"
fi
CMD="${PAIR} vllm serve $MODEL $EXTRA"
eval "$CMD" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %s %s", l.Status, l.Reason)
	}
	if got, want := strings.Join(srv.Argv, " "), "vllm serve m --a 1 --c 3 --b 2 <unknown:python3>"; got != want {
		t.Errorf("argv %q, want %q", got, want)
	}
	if srv.Env["A_X"] != "1" || srv.Env["B_Y"] != "<unknown:python3>" {
		t.Errorf("env A_X=%q B_Y=%q", srv.Env["A_X"], srv.Env["B_Y"])
	}
}

// TestDryRunUntakenBranchGuard: a check that collects what is missing in
// a branch on an unknown value ("${!v:-}" empty) is a guard: the names it
// would collect are not made unknown, and the run goes on as on a machine
// fit to run the point.
func TestDryRunUntakenBranchGuard(t *testing.T) {
	l := runScriptT(t, scriptHead+`
PORT=$(python3 -c 'print(8000)')
missing=()
for v in PORT MODEL; do
  if [[ -z "${!v:-}" ]]; then missing+=("$v"); fi
done
[[ ${#missing[@]} -eq 0 ]] || { echo "missing: ${missing[*]}" >&2; exit 1; }
vllm serve "$MODEL" --port "$PORT" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	if l.Server() == nil {
		t.Fatalf("the check stopped the run: %s %s", l.Status, l.Reason)
	}
}

// TestDryRunHiddenExport: an export of pairs a program printed (for p in
// $ENVS; do export "$p"; done) exports what the dry run cannot name: the
// server says so, and the run goes on.
func TestDryRunHiddenExport(t *testing.T) {
	l := runScriptT(t, scriptHead+`
ENVS=$(python3 -c 'print("A=1 B=2")')
vllm serve "$MODEL" --port 1 > /workspace/early.log 2>&1 &
for p in $ENVS; do export "$p"; done
export KNOWN=1
vllm serve "$MODEL" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	if len(l.Servers) != 2 {
		t.Fatalf("servers %d: %s %s", len(l.Servers), l.Status, l.Reason)
	}
	if h := l.Servers[0].HiddenEnv; len(h) != 0 {
		t.Errorf("a server started before the export: hidden env %q", h)
	}
	if h := l.Servers[1].HiddenEnv; !slices.Equal(h, []string{"<unknown:python3>"}) {
		t.Errorf("hidden env %q, want the unknown word exported", h)
	}
	if l.Servers[1].Env["KNOWN"] != "1" {
		t.Errorf("env %v", l.Servers[1].Env)
	}
}

// TestDryRunProgramWritesAssignments: a python program whose output, a
// file of shell assignments, is sourced (ATOM's models_atom.yaml reader)
// sets each variable its text prints: unknown, never unset.
func TestDryRunProgramWritesAssignments(t *testing.T) {
	l := runScriptT(t, scriptHead+`
f=$(mktemp)
python3 << PYEOF > "$f"
m = {}
print(f"MODEL_FLAGS='{m.get('flags', '')}'")
print(f"_YAML_BLOCK_SIZE='{m.get('block_size', '')}'")
PYEOF
source "$f"
BLOCK="${_YAML_BLOCK_SIZE:-16}"
vllm serve "$MODEL" --block-size "$BLOCK" $MODEL_FLAGS > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %s %s", l.Status, l.Reason)
	}
	if got, want := strings.Join(srv.Argv, " "), "vllm serve m --block-size <unknown:python3> <unknown:python3>"; got != want {
		t.Errorf("argv %q\nwant %q", got, want)
	}
}

// TestDockerEnvFile: a container started with --env-file gets the
// variables of the file the run wrote (NAME=VALUE, or NAME from the
// caller), and one it cannot read makes its variables unknown, not
// absent.
func TestDockerEnvFile(t *testing.T) {
	l := runScriptT(t, scriptHead+`
export FROM_CALLER=7
{ echo "A_VAR=1"; echo "# a comment"; echo "FROM_CALLER"; echo "SPACED=a b"; } > /tmp/client.env
docker run --rm --env-file /tmp/client.env --entrypoint "" img bash -lc 'vllm serve "$MODEL" --port 1 > /workspace/server.log 2>&1 &'
docker run --rm --env-file /nowhere/x.env img bash -lc 'vllm serve m --port 2'
`+scriptTail, map[string]string{"MODEL": "m"})
	if len(l.Servers) != 2 {
		t.Fatalf("servers %d: %s %s", len(l.Servers), l.Status, l.Reason)
	}
	env := l.Servers[0].Env
	if env["A_VAR"] != "1" || env["FROM_CALLER"] != "7" || env["SPACED"] != "a b" {
		t.Errorf("env from the file: %v", env)
	}
	if _, ok := env["# a comment"]; ok {
		t.Errorf("a comment read as a variable")
	}
	if len(l.Servers[0].HiddenEnv) != 0 || len(l.Servers[1].HiddenEnv) != 1 {
		t.Errorf("hidden env %q and %q: only the container of the file not read may start with what it cannot name", l.Servers[0].HiddenEnv, l.Servers[1].HiddenEnv)
	}
}

// TestGrepOfAFile: grep reads a file of the tree as grep does (a match,
// no match, a count); a health probe's body (curl -o FILE -w
// '%{http_code}') is written, empty, so a probe that greps it for an
// error passes as on a machine whose server came up. A file the run
// wrote otherwise (a server's log) holds on a machine what the dry run
// did not write: grep of it is stubbed, as before.
func TestGrepOfAFile(t *testing.T) {
	l := runScriptT(t, scriptHead+`
r=""
grep -q check_env_vars benchmarks/run.sh && r="${r}match "
grep -q nothing-here-at-all benchmarks/benchmark_lib.sh || r="${r}nomatch "
echo "hello" > /tmp/server.log
grep -q "Application startup complete" /tmp/server.log; r="${r}log$? "
grep -c CONC benchmarks/run.sh > /tmp/n; r="${r}count$(cat /tmp/n) "
code=$(curl -s -o /tmp/canary.out -w '%{http_code}' -X POST "http://x:30000/v1/chat/completions")
if [ "$code" = "200" ] && ! grep -qE "circuits open|No available" /tmp/canary.out 2>/dev/null; then r="${r}canary"; fi
vllm serve "$r" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %s %s", l.Status, l.Reason)
	}
	if got, want := srv.Argv[2], "match nomatch log0 count3 canary"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// unreadable is a revision whose file at bad is there but cannot be
// read (a file of gigabytes): its stat says so.
type unreadable struct {
	testfs.Files
	bad string
}

func (u unreadable) Stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(u.Files, name)
	if err == nil && name == u.bad {
		return hugeInfo{fi}, nil
	}
	return fi, err
}

type hugeInfo struct{ fs.FileInfo }

func (hugeInfo) Size() int64 { return 3 << 30 }

// TestUnreadFileIsUnknown: a file of the tree a run sources that is
// there but was not read (too large) makes what the run launches from
// there unknown, saying why; it is not a file that does not exist (a
// failed launch).
func TestUnreadFileIsUnknown(t *testing.T) {
	files := unreadable{testfs.Files{"benchmarks/benchmark_lib.sh": lib,
		"benchmarks/run.sh": "source benchmarks/benchmark_lib.sh\nvllm serve m > /workspace/server.log &\n"}, "benchmarks/benchmark_lib.sh"}
	l := Run(context.Background(), files, "benchmarks/run.sh", nil, map[string]string{"PATH": "/bin"}, Options{Timeout: time.Second})
	if l.Status != StatusUnknown || !strings.Contains(l.Reason, "benchmarks/benchmark_lib.sh was not read") || !strings.Contains(l.Reason, "too large") {
		t.Errorf("status %s (%s), want unknown: not read, too large", l.Status, l.Reason)
	}
}
