package recipe

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// A template and its sweep caller, in the shapes InferenceX's have had:
// inputs with defaults, an env: block of expressions, the launch step's
// env: and exports, a caller passing matrix.config fields.
const wfTemplate = `on:
  workflow_call:
    inputs:
      runner: { type: string, required: true }
      model-prefix: { type: string, required: true }
      exp-name: { type: string, required: true }
      tp: { type: string, required: true }
      pp: { type: string, default: '1' }
      dp-attn: { type: boolean, required: true }
      conc: { type: string, required: true }
      duration: { type: string, default: '1800' }
      recipe-fingerprint: { type: string, default: '' }
      require-power: { type: boolean, default: false }
      scenario-type: { type: string, default: 'fixed-seq-len' }
env:
  RANDOM_RANGE_RATIO: 0.8
  AIPERF_FAILED_REQUEST_THRESHOLD: '0.10'
  HF_TOKEN: ${{ secrets.HF_TOKEN }}
  EXP_NAME: ${{ inputs.exp-name }}
  MODEL_PREFIX: ${{ inputs.model-prefix }}
  TP: ${{ inputs.tp }}
  PP_SIZE: ${{ inputs.pp }}
  DP_ATTENTION: ${{ inputs.dp-attn }}
  CONC: ${{ inputs.conc }}
  DURATION: ${{ inputs.duration }}
  RECIPE_FINGERPRINT: ${{ inputs.recipe-fingerprint }}
  REQUIRE_POWER: ${{ inputs.require-power && '1' || '0' }}
  SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}
  COMMIT: ${{ github.sha }}
jobs:
  benchmark:
    runs-on: ${{ inputs.runner }}
    steps:
      - uses: actions/checkout@v5
      - name: Launch job script
        env:
          RUNNER_NAME: ${{ runner.name }}
          RUNNER_TYPE: ${{ inputs.runner }}
          BASE: ${{ env.EXP_NAME }}_tp${{ env.TP }}_conc${{ env.CONC }}_${{ runner.name }}
        run: |
          export RESULT_FILENAME="$BASE"
          if [ -n "$RECIPE_FINGERPRINT" ]; then
            export RESULT_FILENAME="${RESULT_FILENAME}_recipe-${RECIPE_FINGERPRINT:0:16}"
          fi
          export GPU_COUNT=$((TP * PP_SIZE))
          echo "GPU_COUNT=${GPU_COUNT}" >> "$GITHUB_ENV"
          bash ./runners/launch_${RUNNER_NAME%%_*}.sh
          if [ "${{ inputs.scenario-type }}" = "agentic-coding" ]; then python3 validate.py; fi
`

const wfCaller = `on: workflow_dispatch
jobs:
  sweep:
    uses: ./.github/workflows/benchmark-tmpl.yml
    strategy:
      matrix:
        config: ${{ fromJson(needs.setup.outputs.search-space-config) }}
    with: &inputs
      runner: ${{ matrix.config.runner }}
      model-prefix: ${{ matrix.config.model-prefix }}
      exp-name: ${{ matrix.config.exp-name }}
      tp: ${{ matrix.config.tp }}
      dp-attn: ${{ matrix.config.dp-attn }}
      conc: ${{ matrix.config.conc }}
      recipe-fingerprint: ${{ matrix.config['recipe-fingerprint'] || '' }}
  again:
    uses: ./.github/workflows/benchmark-tmpl.yml
    with: *inputs
`

// TestPointEnvFromTheWorkflow: a point's environment is what the
// revision's own workflow gives it, evaluated for that point; what the
// workflow does not set is absent, what a run alone knows is unknown,
// and a workflow perflog cannot read gets its table, saying why.
func TestPointEnvFromTheWorkflow(t *testing.T) {
	base := testfs.Revision("v1", testfs.Script).
		With(".github/workflows/benchmark-tmpl.yml", wfTemplate).
		With(".github/workflows/run-sweep.yml", wfCaller)
	r := NewRev("head", base, nil)
	pts, err := r.LaunchPoints("k1-fp8-b200-vllm")
	if err != nil || len(pts) < 6 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	p := pts[len(pts)-1] // tp4 ep4 dpa conc 128
	want := map[string]string{
		"RANDOM_RANGE_RATIO":              "0.8",
		"AIPERF_FAILED_REQUEST_THRESHOLD": "0.10", // as written
		"HF_TOKEN":                        "<secret>",
		"EXP_NAME":                        "k1_1k1k",
		"MODEL_PREFIX":                    "k1",
		"TP":                              "4",
		"PP_SIZE":                         "1", // not passed: the input's default
		"DP_ATTENTION":                    "true",
		"CONC":                            "128",
		"DURATION":                        "1800", // the era's default, not today's 3600
		"RECIPE_FINGERPRINT":              "",
		"REQUIRE_POWER":                   "0",
		"SCENARIO_SUBDIR":                 "fixed_seq_len/",
		"COMMIT":                          "<unknown:github.sha>",
		"RUNNER_NAME":                     "b200-nb_0",
		"RUNNER_TYPE":                     "b200",
		"RESULT_FILENAME":                 "k1_1k1k_tp4_conc128_b200-nb_0",
		"GPU_COUNT":                       "4",
		"USER":                            "runner", // the runner's own
	}
	for k, v := range want {
		if got, ok := p.Env[k]; !ok || got != v {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	for _, k := range []string{"ISL", "MAX_MODEL_LEN", "IS_AGENTIC", "PYTHONDONTWRITEBYTECODE"} {
		if v, ok := p.Env[k]; ok {
			t.Errorf("%s = %q: this workflow does not set it", k, v)
		}
	}
	if p.EnvFrom != ".github/workflows/benchmark-tmpl.yml" {
		t.Errorf("env from %q", p.EnvFrom)
	}

	// a step the reading does not follow: the table, and why
	odd := strings.Replace(wfTemplate, "export GPU_COUNT=$((TP * PP_SIZE))", "export GPU_COUNT=$(nproc)", 1)
	r = NewRev("odd", base.With(".github/workflows/benchmark-tmpl.yml", odd), nil)
	pts, _ = r.LaunchPoints("k1-fp8-b200-vllm")
	if p := pts[0]; !strings.HasPrefix(p.EnvFrom, "perflog's table") || !strings.Contains(p.EnvFrom, "command substitution") ||
		p.Env["DURATION"] != "3600" || p.Env["GPU_COUNT"] != "8" {
		t.Errorf("unreadable step: env from %q, DURATION %q GPU_COUNT %q", p.EnvFrom, p.Env["DURATION"], p.Env["GPU_COUNT"])
	}
	// no workflow at all: the table
	r = NewRev("none", testfs.Revision("v1", testfs.Script), nil)
	pts, _ = r.LaunchPoints("k1-fp8-b200-vllm")
	if p := pts[0]; !strings.Contains(p.EnvFrom, "no workflow runs a launcher") || p.Env["PP_SIZE"] != "1" {
		t.Errorf("no workflow: env from %q", p.EnvFrom)
	}
}

// TestWorkflowValuesAreInert: what a workflow file says is text: a
// value with a command substitution, a ~user or a deep expression is
// never run or looked up; the point gets the table.
func TestWorkflowValuesAreInert(t *testing.T) {
	base := testfs.Revision("v1", testfs.Script).With(".github/workflows/run-sweep.yml", wfCaller)
	for _, odd := range []string{
		strings.Replace(wfTemplate, `export RESULT_FILENAME="$BASE"`, `export RESULT_FILENAME="$(cat /etc/passwd)"`, 1),
		strings.Replace(wfTemplate, `export RESULT_FILENAME="$BASE"`, `export RESULT_FILENAME=~root/x`, 1),
		strings.Replace(wfTemplate, `export RESULT_FILENAME="$BASE"`, `export RESULT_FILENAME=<(id)`, 1),
		strings.Replace(wfTemplate, `${{ inputs.tp }}`, `${{ `+strings.Repeat("(", 5000)+`1 }}`, 1),
	} {
		r := NewRev("odd", base.With(".github/workflows/benchmark-tmpl.yml", odd), nil)
		pts, err := r.LaunchPoints("k1-fp8-b200-vllm")
		if err != nil || len(pts) == 0 {
			t.Fatal(err)
		}
		if p := pts[0]; !strings.HasPrefix(p.EnvFrom, "perflog's table") || strings.Contains(p.Env["RESULT_FILENAME"], "root") {
			t.Errorf("env from %q, RESULT_FILENAME %q", p.EnvFrom, p.Env["RESULT_FILENAME"])
		}
	}
}

// TestWorkflowEnvAcrossEras: on the sample's history, perflog's table
// is today's workflow (at HEAD every variable it sets is what the
// workflow gives, point by point), and older revisions get their own
// workflow's environment: the template's defaults of June 2026 for a
// fixed-seq-len point, and no MODEL_PREFIX in November 2025.
func TestWorkflowEnvAcrossEras(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	rev := NewRev("head", r.Tree(head), &config.Settings{})
	keys, err := rev.Keys()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, k := range keys {
		pts, err := rev.LaunchPoints(k)
		if err != nil {
			t.Fatal(err)
		}
		table := NewRev("table", r.Tree(head), &config.Settings{})
		table.wfRead = true // no workflow: the table
		tpts, _ := table.LaunchPoints(k)
		for i, p := range pts {
			if p.Multinode {
				continue
			}
			if p.EnvFrom != ".github/workflows/benchmark-tmpl.yml" {
				t.Fatalf("%s point %d: env from %q", k, p.Index, p.EnvFrom)
			}
			for name, v := range tpts[i].Env {
				if got, ok := p.Env[name]; !ok || got != v {
					t.Errorf("%s point %s: %s = %q from the workflow, %q in the table", k, p.Label(), name, got, v)
				}
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Errorf("%d points compared", compared)
	}

	byPR := commitsByPR(t, r, head)
	for _, c := range []struct {
		pr      int
		key     string
		want    map[string]string
		without []string
	}{
		{1935, "dsr1-fp4-mi355x-sglang", map[string]string{"DURATION": "1800", "OFFLOADING": "none", "TOTAL_CPU_DRAM_GB": "600", "SCENARIO_TYPE": "fixed-seq-len"}, []string{"KV_OFFLOADING"}},
		{250, "dsr1-fp4-mi355x-sglang", map[string]string{"EXP_NAME": "dsr1_1k1k", "TP": "4"}, []string{"MODEL_PREFIX", "SPEC_DECODING", "DURATION"}},
	} {
		commit, ok := byPR[c.pr]
		if !ok {
			t.Fatalf("#%d not in the sample", c.pr)
		}
		pts, err := NewRev("era", r.Tree(commit), &config.Settings{}).LaunchPoints(c.key)
		if err != nil || len(pts) == 0 {
			t.Fatalf("#%d %s: %d points, %v", c.pr, c.key, len(pts), err)
		}
		p := pts[0]
		for k, v := range c.want {
			if p.Env[k] != v {
				t.Errorf("#%d %s: %s = %q, want %q", c.pr, c.key, k, p.Env[k], v)
			}
		}
		for _, k := range c.without {
			if v, ok := p.Env[k]; ok {
				t.Errorf("#%d %s: %s = %q, but that workflow does not set it", c.pr, c.key, k, v)
			}
		}
	}
}

// hashedFiles is a tree that says its files' object ids (as a git tree
// does), counting its reads.
type hashedFiles struct {
	testfs.Files
	reads map[string]int
}

func (h hashedFiles) PathID(p string, dir bool) string {
	if s, ok := h.Files[p]; ok && !dir {
		return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))
	}
	return ""
}

func (h hashedFiles) ReadFile(p string) ([]byte, error) {
	h.reads[p]++
	return fs.ReadFile(h.Files, p)
}

// TestSweepCacheReadsEachContentOnce: revisions that hold the same
// generator, runners.yaml and workflow read and parse them once, and a
// walk's recorder still records them as read (its watch), found or not.
func TestSweepCacheReadsEachContentOnce(t *testing.T) {
	files := testfs.Revision("v1", testfs.Script).
		With(".github/workflows/benchmark-tmpl.yml", wfTemplate).
		With(".github/workflows/run-sweep.yml", wfCaller).
		With("utils/matrix_logic/generate_sweep_configs.py", "MAX_MODEL_LEN.value: isl + osl + 200\n")
	h := hashedFiles{files, map[string]int{}}
	c := NewSweepCache()
	var first map[string]string
	for i := range 3 {
		rec := revfs.NewRecorder(h)
		r := NewRev("v", rec, nil)
		r.UseSweepCache(c)
		pts, err := r.LaunchPoints("k1-fp8-b200-vllm")
		if err != nil || len(pts) == 0 {
			t.Fatal(err)
		}
		if i == 0 {
			first = pts[0].Env
		} else if !maps.Equal(first, pts[0].Env) {
			t.Errorf("revision %d: another environment", i)
		}
		read := map[string]bool{}
		for _, p := range rec.Paths() {
			read[p] = true
		}
		for _, p := range []string{"configs/runners.yaml", "utils/matrix_logic/generate_sweep_configs.py", ".github/workflows/benchmark-tmpl.yml", ".github/workflows/run-sweep.yml"} {
			if !read[p] {
				t.Errorf("revision %d: %s is not recorded as read", i, p)
			}
		}
	}
	if pts := first["MAX_MODEL_LEN"]; pts != "" {
		t.Errorf("this workflow sets no MAX_MODEL_LEN, got %q", pts)
	}
	for _, p := range []string{"configs/runners.yaml", "utils/matrix_logic/generate_sweep_configs.py", ".github/workflows/benchmark-tmpl.yml", ".github/workflows/run-sweep.yml"} {
		if h.reads[p] != 1 {
			t.Errorf("%s read %d times, want once", p, h.reads[p])
		}
	}
}

// TestWorkflowConstantsAreRunnerFacts: what the workflow's env: gives
// every point alike (a literal) and the server receives as given is a
// launch fact of the runner's, so a history can say which commit gave
// it; an expression's value is the point's, a constant the launch
// changed is the launch's, one the server never receives is none, and
// perflog's own table of the workflow gives none.
func TestWorkflowConstantsAreRunnerFacts(t *testing.T) {
	base := testfs.Revision("v1", testfs.Script).
		With(".github/workflows/benchmark-tmpl.yml", wfTemplate).
		With(".github/workflows/run-sweep.yml", wfCaller)
	pts, err := NewRev("head", base, nil).LaunchPoints("k1-fp8-b200-vllm")
	if err != nil || len(pts) == 0 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	p := pts[0]
	if want := []string{"AIPERF_FAILED_REQUEST_THRESHOLD", "RANDOM_RANGE_RATIO"}; !slices.Equal(p.EnvConst, want) {
		t.Fatalf("constants %v, want %v", p.EnvConst, want)
	}
	server := func(env map[string]string) *PointLaunch {
		return &PointLaunch{Point: p, Launch: &dryrun.Launch{Status: dryrun.StatusLaunched,
			Servers: []dryrun.Command{{Argv: []string{"vllm", "serve"}, Env: env}}}}
	}
	f := server(map[string]string{"RANDOM_RANGE_RATIO": "0.8", "TP": p.Env["TP"], "CONC": p.Env["CONC"]}).Facts()
	if f["launch.runner-env.RANDOM_RANGE_RATIO"] != "0.8" {
		t.Errorf("facts %v: the workflow's constant the server receives is missing", f)
	}
	for _, k := range []string{"launch.runner-env.AIPERF_FAILED_REQUEST_THRESHOLD", "launch.runner-env.TP", "launch.runner-env.CONC", "launch.env.TP"} {
		if v, ok := f[k]; ok {
			t.Errorf("%s = %q: not received, or the point's own", k, v)
		}
	}
	if f := server(map[string]string{"RANDOM_RANGE_RATIO": "0.5"}).Facts(); f["launch.env.RANDOM_RANGE_RATIO"] != "0.5" {
		t.Errorf("facts %v: a constant the launch changed is the launch's", f)
	}
	settings := &config.Settings{}
	settings.Launch.Env = map[string]string{"RANDOM_RANGE_RATIO": "0.9"}
	if pts, _ := NewRev("head", base, settings).LaunchPoints("k1-fp8-b200-vllm"); slices.Contains(pts[0].EnvConst, "RANDOM_RANGE_RATIO") {
		t.Errorf("constants %v: the settings set RANDOM_RANGE_RATIO", pts[0].EnvConst)
	}
	if pts, _ := NewRev("none", testfs.Revision("v1", testfs.Script), nil).LaunchPoints("k1-fp8-b200-vllm"); len(pts[0].EnvConst) > 0 {
		t.Errorf("perflog's table: constants %v", pts[0].EnvConst)
	}
}
