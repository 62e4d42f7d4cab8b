package dryrun

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/testfs"
)

// multiNode is a driver of the AMD shape in small: the driver submits a
// job, the job runs one task a node in a container, and each node's
// script reads its rank (prefill on node 0, decode after), with settings
// from a program the sandbox does not run, positional parameters past
// the ninth, and unknown values inside `bash -c` code.
var multiNode = testfs.Files{
	"runners/launch.sh": `cd "$GITHUB_WORKSPACE/benchmarks/mn" || exit 1
JOB_ID=$(bash ./submit.sh 1 1 2 2 a b c d e f false true)
echo "$JOB_ID"
`,
	"benchmarks/mn/submit.sh": `ELEVENTH=${11:-unset}
TWELFTH=${12}
export ELEVENTH TWELFTH
JOB=$(sbatch --parsable -N "$(( $1 + $3 ))" -n 3 --job-name x "$(dirname "$0")/job.slurm")
echo "$JOB"
`,
	"benchmarks/mn/job.slurm": `NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)
HOST=$(which nicctl)
srun --nodelist="$NODES" bash -lc "
set -euo pipefail
exec docker run --rm -e NODE_RANK=\$SLURM_PROCID -e ELEVENTH -e JOB=$SLURM_JOB_ID -v $HOST:/usr/sbin/nicctl --entrypoint '' img bash -lc '/workspace/benchmarks/mn/server.sh'
"
`,
	"benchmarks/mn/server.sh": `eval "$(python3 -c "print(f'MEM=\"{m}\"')")"
if [ "$NODE_RANK" -eq 0 ]; then
  CMD="python3 -m sglang.launch_server --disaggregation-mode prefill --mem-fraction-static ${MEM} --x $ELEVENTH"
else
  CMD="python3 -m sglang.launch_server --disaggregation-mode decode --node $NODE_RANK"
fi
bash -c "$CMD" &
wait
if [ "$NODE_RANK" -eq 0 ]; then
  until [ "$(curl -s -o /dev/null -w '%{http_code}' http://x/health)" = "200" ]; do sleep 1; done
  python3 -m sglang_router.launch_router --pd-disaggregation
fi
`,
}

func TestMultiNodeJob(t *testing.T) {
	l := Run(context.Background(), multiNode, "runners/launch.sh", nil,
		map[string]string{"PATH": "/bin", "GITHUB_WORKSPACE": Workspace}, Options{Timeout: 5 * time.Second})
	if l.Status != StatusLaunched {
		t.Fatalf("status %s (%s at %s)", l.Status, l.Reason, l.EndedAt)
	}
	var modes []string
	for _, s := range l.Servers {
		mode, _ := s.Flag("--disaggregation-mode")
		modes = append(modes, strings.Join(mode, ""))
		if s.Env["JOB"] != JobID {
			t.Errorf("the job id a node got: %q, want %q", s.Env["JOB"], JobID)
		}
		if s.At != "benchmarks/mn/server.sh:7" {
			t.Errorf("a server started at %q, want where its bash -c runs", s.At)
		}
	}
	// one task a node of the three, the last first (node 0 starts the
	// router, after the others)
	if want := []string{"decode", "decode", "prefill"}; !slices.Equal(modes, want) {
		t.Fatalf("servers %q, want %q", modes, want)
	}
	if v, _ := l.Servers[0].Flag("--node"); strings.Join(v, "") != "2" {
		t.Errorf("the first task's rank %q, want 2", v)
	}
	prefill := l.Servers[2]
	if v, _ := prefill.Flag("--mem-fraction-static"); strings.Join(v, "") != UnknownMarker+"python3>" {
		t.Errorf("a setting printed by a program the sandbox does not run: %q, want it unknown", v)
	}
	if v, _ := prefill.Flag("--x"); strings.Join(v, "") != "false" {
		t.Errorf("${11}: %q, want false", v)
	}
	if len(l.Routers) != 1 {
		t.Errorf("routers %d, want the one node 0 starts once its health probe answers", len(l.Routers))
	}
}

func TestBigPositionalParams(t *testing.T) {
	l := runScriptT(t, `set -- 1 2 3 4 5 6 7 8 9 ten eleven
A=${10:-dflt}; B=${12:-dflt}; C="${11}"; D=${12-unset}
vllm serve m --a "$A" --b "$B" --c "$C" --d "$D"
`, nil)
	for flag, want := range map[string]string{"--a": "ten", "--b": "dflt", "--c": "eleven", "--d": "unset"} {
		if v, _ := l.Server().Flag(flag); strings.Join(v, "") != want {
			t.Errorf("%s %q, want %q", flag, v, want)
		}
	}
}

func TestInertMarkers(t *testing.T) {
	for in, want := range map[string]string{
		`ls <unknown:x>`:          `ls '<unknown:x>'`,
		`A=<unknown:x> ls`:        `A='<unknown:x>' ls`,
		`ls "<unknown:x>"`:        `ls "<unknown:x>"`,
		`ls '<unknown:x>' <a`:     `ls '<unknown:x>' <a`,
		`echo \"<unknown:x>\"`:    `echo \"'<unknown:x>'\"`,
		`echo "a \" <unknown:x>"`: `echo "a \" <unknown:x>"`,
	} {
		if got := inertMarkers(in); got != want {
			t.Errorf("inertMarkers(%q) = %q, want %q", in, got, want)
		}
	}
}

// An srun outside a job the dry run started runs its command once, as a
// single-node launcher's srun always has.
func TestSrunOutsideAJobRunsOnce(t *testing.T) {
	l := runScriptT(t, `srun --nodes=3 --ntasks=3 bash -c 'vllm serve m --rank "${SLURM_PROCID:-none}"'
`, nil)
	if len(l.Servers) != 1 {
		t.Fatalf("servers %d, want 1", len(l.Servers))
	}
	if v, _ := l.Server().Flag("--rank"); strings.Join(v, "") != "none" {
		t.Errorf("rank %q, want none", v)
	}
}

// What the AMD multi-node path needed of the shell, each alone: $0 as
// bash was given it (bash ./submit.sh from its directory), which, a
// sourced file's eval of a program the sandbox does not run, and a
// background command followed by another on one line in a sourced file.
func TestMultiNodeShell(t *testing.T) {
	files := testfs.Files{
		"runners/launch.sh": `cd benchmarks/mn && bash ./submit.sh`,
		"benchmarks/mn/submit.sh": `D=$(dirname "$0")
source "$D/lib.sh"
wait_or_die true
vllm serve m --dir "$D" --which "$(which nicctl)" --mem "$MEM" --other "${OTHER:-unset}"
`,
		"benchmarks/mn/lib.sh": `eval "$(python3 -c "
print(f'MEM=\"{m}\"')
")"
wait_or_die() {
    "$@" & local cmd=$!
    wait "$cmd"
}
`,
	}
	l := Run(context.Background(), files, "runners/launch.sh", nil, map[string]string{"PATH": "/bin"}, Options{Timeout: 5 * time.Second})
	if l.Status != StatusLaunched {
		t.Fatalf("status %s (%s at %s)", l.Status, l.Reason, l.EndedAt)
	}
	for flag, want := range map[string]string{"--dir": ".", "--which": "/usr/bin/nicctl", "--mem": UnknownMarker + "python3>", "--other": "unset"} {
		if v, _ := l.Server().Flag(flag); strings.Join(v, "") != want {
			t.Errorf("%s %q, want %q", flag, v, want)
		}
	}
}

// TestIdleGPUs: a launch path that waits for idle GPUs (benchmark_lib.sh's
// wait_for_amd_gpu_clean, under pipefail and errexit) goes on, as on a
// machine fit to run the point.
func TestIdleGPUs(t *testing.T) {
	l := runScriptT(t, `set -eo pipefail
used=$(rocm-smi --showmemuse 2>/dev/null | grep -oE "GPU Memory Allocated \(VRAM%\): [0-9]+" | awk '{if ($NF > m) m = $NF} END {print m+0}')
[ "$used" -le 10 ] || exit 1
busy=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)
[ -z "$busy" ] || exit 1
vllm serve m
`, nil)
	if l.Status != StatusLaunched {
		t.Fatalf("status %s (%s at %s)", l.Status, l.Reason, l.EndedAt)
	}
}
