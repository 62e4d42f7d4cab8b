package recipe

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe/dryrun"
)

// LaunchPoint is one search-space point of a recipe as the benchmark
// workflow runs it: the environment the workflow gives the launcher
// (InferenceX's generate_sweep_configs.py and benchmark-tmpl.yml; see
// PointEnv) and the launcher and script that run it.
type LaunchPoint struct {
	Key string `json:"key"`
	// Index numbers the recipe's points from 1 in file order (rows, then
	// concurrencies).
	Index int    `json:"index"`
	File  string `json:"file"`
	// KeyLine is the recipe's line, Line its search-space entry's.
	KeyLine  int    `json:"key_line"`
	Line     int    `json:"line"`
	Scenario string `json:"scenario"`
	// Runner is the runner the point runs on (the first of its label's
	// runners of the launcher family), Launcher its launcher script and
	// Script the benchmark script the key resolves to ("" when none).
	Runner    string `json:"runner"`
	Launcher  string `json:"launcher"`
	Script    string `json:"script,omitempty"`
	Multinode bool   `json:"multinode"`
	// The point's parallelism and settings as the generator defaults them.
	TP           int64  `json:"tp"`
	EP           int64  `json:"ep"`
	DPAttn       bool   `json:"dp_attn"`
	Spec         string `json:"spec_decoding"`
	KVOffloading string `json:"kv_offloading,omitempty"`
	KVBackend    string `json:"kv_offload_backend,omitempty"`
	Conc         int64  `json:"conc"`
	ISL          int64  `json:"isl,omitempty"`
	OSL          int64  `json:"osl,omitempty"`
	// Env is the workflow's environment for the launcher; EnvFrom says
	// where it was read: the revision's workflow file, or perflog's own
	// table of today's workflow (and why).
	Env     map[string]string `json:"env"`
	EnvFrom string            `json:"env_from,omitempty"`
	// EnvConst names the variables of Env the workflow file gives every
	// point alike (a literal of its env:), sorted and shared: none when
	// Env is perflog's table.
	EnvConst []string `json:"-"`
	// Sides are a multi-node point's workers ("p1 tp4 ep4 dpa, d3 tp8
	// ep8"), Recipe the srt-slurm recipe file that describes what they
	// launch (when the repository holds it).
	Sides  string `json:"sides,omitempty"`
	Recipe string `json:"recipe,omitempty"`
	// Note says why a point is not dry-run (multi-node, no script).
	Note string `json:"note,omitempty"`
	// Dup numbers the points of the recipe with the same identity
	// otherwise, in file order (0 for the first): two multi-node rows of
	// the same workers whose concurrency lists share a value.
	Dup int `json:"dup,omitempty"`
}

// ID is the point's identity across revisions: its scenario, sequence
// lengths, parallelism, spec decoding, KV offloading and concurrency.
// The same point at base and head is compared, whatever else (image,
// model, script) the change did to its environment.
func (p *LaunchPoint) ID() string {
	id := p.baseID()
	if p.Dup > 0 {
		id += fmt.Sprintf("|#%d", p.Dup)
	}
	return id
}

func (p *LaunchPoint) baseID() string {
	if p.Multinode {
		return fmt.Sprintf("%s|%d/%d|%s|%s|%s|c%d", p.Scenario, p.ISL, p.OSL, p.Sides, p.Spec, p.Recipe, p.Conc)
	}
	return fmt.Sprintf("%s|%d/%d|tp%d|ep%d|dpa%v|%s|%s/%s|c%d", p.Scenario, p.ISL, p.OSL, p.TP, p.EP, p.DPAttn, p.Spec, p.KVOffloading, p.KVBackend, p.Conc)
}

// Label names the point for people: "3 (tp8 ep8 dpa conc 64, 8k1k)".
func (p *LaunchPoint) Label() string {
	parts := []string{fmt.Sprintf("tp%d", p.TP)}
	if p.Sides != "" {
		parts = []string{p.Sides}
	}
	if p.EP > 1 {
		parts = append(parts, fmt.Sprintf("ep%d", p.EP))
	}
	if p.DPAttn {
		parts = append(parts, "dpa")
	}
	if p.Spec != "" && p.Spec != "none" {
		parts = append(parts, p.Spec)
	}
	if p.KVOffloading != "" && p.KVOffloading != "none" {
		parts = append(parts, "kv "+p.KVOffloading+"/"+p.KVBackend)
	}
	parts = append(parts, fmt.Sprintf("conc %d", p.Conc))
	if p.ISL > 0 {
		parts = append(parts, seqLenName(p.ISL, p.OSL))
	}
	return fmt.Sprintf("%d (%s)", p.Index, strings.Join(parts, " "))
}

// sides names a multi-node entry's workers: "p1 tp4 ep4 dpa, d3 tp8 ep8".
func sides(e *config.Entry) string {
	var out []string
	for _, side := range []struct {
		c byte
		s *config.Side
	}{{'p', e.Prefill}, {'d', e.Decode}} {
		v := side.s
		if v == nil {
			continue
		}
		parts := []string{fmt.Sprintf("%c%d", side.c, v.Workers.Or(1)), fmt.Sprintf("tp%d", v.TP.Or(1))}
		if ep := v.EP.Or(1); ep > 1 {
			parts = append(parts, fmt.Sprintf("ep%d", ep))
		}
		if v.DPAttn.V {
			parts = append(parts, "dpa")
		}
		out = append(out, strings.Join(parts, " "))
	}
	return strings.Join(out, ", ")
}

// seqLenName names a sequence length in a point's label: "8k1k" when
// both lengths are whole multiples of 1024 (as the repository names its
// scenarios), else "isl_osl". Labels identify points across commits, so
// this name does not follow the generator of the day (expSeqLen does).
func seqLenName(isl, osl int64) string {
	if isl > 0 && osl > 0 && isl%1024 == 0 && osl%1024 == 0 {
		return fmt.Sprintf("%dk%dk", isl/1024, osl/1024)
	}
	return fmt.Sprintf("%d_%d", isl, osl)
}

// maxAgenticDRAMMiB caps a node's CPU DRAM before utilisation scaling
// (generate_sweep_configs.py's MAX_AGENTIC_AVAILABLE_CPU_DRAM_MIB).
const maxAgenticDRAMMiB = 2_861_022

// LaunchPoints lists the points of a recipe at the revision, each with
// the environment its launcher starts with. A recipe that does not exist
// has none.
func (r *Rev) LaunchPoints(key string) ([]LaunchPoint, error) {
	rec, ok, err := r.Recipe(key)
	if err != nil || !ok {
		return nil, err
	}
	runs, err := r.Runs(key)
	if err != nil {
		return nil, err
	}
	res, err := r.Resolver()
	if err != nil {
		return nil, err
	}
	hw := res.Hardware
	label, multinode := rec.Runner, rec.Multinode
	var out []LaunchPoint
	for _, sc := range rec.Scenarios() {
		scenario := sc.Name
		for _, item := range sc.Items {
			for i := range item.Entries {
				e := &item.Entries[i]
				base := LaunchPoint{Key: key, File: rec.File, KeyLine: rec.Line, Line: e.Line, Scenario: scenario, Multinode: multinode,
					TP: e.TP.Or(0), EP: e.EP.Or(1), DPAttn: e.DPAttn.V, Spec: e.Spec.Or("none")}
				if scenario == "fixed-seq-len" {
					base.ISL, base.OSL = item.ISL, item.OSL
				} else {
					base.KVOffloading, base.KVBackend = e.KVOffloading.Or("none"), e.KVBackend
				}
				run := pickRun(runs, scenario, base.Spec)
				if run != nil {
					base.Script = run.Script
					if run.Family != "" {
						base.Launcher = "runners/launch_" + run.Family + ".sh"
						base.Runner = runnerName(res, label, run.Family)
					}
					switch {
					case multinode:
						base.Sides = sides(e)
						base.Note = "multi-node: run by srt-slurm or a driver script, not dry-run"
						if cf := e.Settings()["CONFIG_FILE"]; cf != "" && strings.Contains(cf, ":") {
							// srt-slurm's override syntax (FILE:VARIANT[0])
							base.Note = "multi-node: an srt-slurm recipe with an override (" + cf + "), not read"
						} else if cf != "" {
							if path, note, _ := res.RecipeFile(cf); path != "" {
								base.Recipe, base.Note = path, ""
							} else if note != "" {
								base.Note = "multi-node: " + note + ", not dry-run"
							}
						} else if run.Script != "" && base.Launcher != "" {
							base.Note = "" // a driver script of the tree: dry-run (below, when the workflow gives its environment)
						}
					case run.Script == "":
						base.Note = run.Note
					}
				} else {
					base.Note = "no launcher runs it"
				}
				for _, conc := range e.Conc {
					pt := base
					pt.Index = len(out) + 1
					pt.Conc = conc
					var duration int64
					if scenario == "agentic-coding" {
						duration = r.agenticDuration(&item)
					}
					r.setPointEnv(rec, e, &pt, label, dramGB(hw[label], item.DRAMUtilization, &pt, e), duration)
					if pt.Multinode && pt.Recipe == "" && pt.Note == "" && !strings.HasSuffix(pt.EnvFrom, ".yml") && !strings.HasSuffix(pt.EnvFrom, ".yaml") {
						pt.Note = "multi-node: " + pt.EnvFrom + ", not dry-run"
					}
					r.applyEnvSettings(&pt)
					out = append(out, pt)
				}
			}
		}
	}
	seen := map[string]int{}
	for i := range out {
		id := out[i].baseID()
		out[i].Dup = seen[id]
		seen[id]++
	}
	return out, nil
}

func pickRun(runs []config.Resolution, scenario, spec string) *config.Resolution {
	for i := range runs {
		if runs[i].Scenario == scenario && runs[i].Spec == spec {
			return &runs[i]
		}
	}
	for i := range runs {
		if runs[i].Scenario == scenario {
			return &runs[i]
		}
	}
	return nil
}

// runnerName is the first runner name of the label in the family (the
// launcher derives paths and ports from it), else family_0.
func runnerName(res *config.Resolver, label, family string) string {
	for _, n := range res.Labels[label] {
		if f, _, _ := strings.Cut(n, "_"); f == family {
			return n
		}
	}
	return family + "_0"
}

// dramGB is the generator's agentic_dram_offload_gb: the node's CPU DRAM
// (capped), times the utilisation, times the share of the node's GPUs
// the point uses, in decimal GB. "0" without DRAM offloading; "" when
// the runner's hardware is not listed (then the launch sees it unset).
func dramGB(h config.Hardware, util float64, p *LaunchPoint, e *config.Entry) string {
	if p.KVOffloading != "dram" {
		return "0"
	}
	if h.DRAMMiB <= 0 || h.GPUs <= 0 || util <= 0 {
		return ""
	}
	avail := min(h.DRAMMiB, maxAgenticDRAMMiB)
	gpus := p.TP * e.PP.Or(1) * e.PCP.Or(1)
	if w := e.Prefill; w != nil {
		// a multi-node point: a prefill worker's share of its node
		// (the generator's worker_gpus_per_node; it refuses a worker
		// that does not tile its nodes)
		gpus = w.TP.Or(1) * w.PP.Or(1) * w.PCP.Or(1)
		switch {
		case gpus > h.GPUs && gpus%h.GPUs != 0, gpus <= h.GPUs && h.GPUs%gpus != 0:
			return ""
		case gpus > h.GPUs:
			gpus = h.GPUs
		}
	}
	// exact decimal arithmetic, as the generator's Decimal
	u := new(big.Rat)
	u.SetString(strconv.FormatFloat(util, 'f', -1, 64))
	b := new(big.Rat).SetInt64(avail * 1024 * 1024)
	b.Mul(b, u)
	b.Mul(b, big.NewRat(gpus, h.GPUs))
	b.Quo(b, big.NewRat(1_000_000_000, 1))
	n := new(big.Int).Quo(b.Num(), b.Denom())
	return n.String()
}

// pointEnv is the environment benchmark-tmpl.yml gives a single-node
// point (its env block and the launch step).
func pointEnv(rec *config.Recipe, e *config.Entry, p *LaunchPoint, label, dram string, gen *sweepGenerator, duration int64) map[string]string {
	b := func(v bool) string { return strconv.FormatBool(v) }
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	prefix := rec.ModelPrefix
	pp, dcp, pcp := e.PP.Or(1), e.DCP.Or(1), e.PCP.Or(1)
	agentic := p.Scenario == "agentic-coding"
	env := map[string]string{
		"RANDOM_RANGE_RATIO": "0.8", "HF_TOKEN": "<secret>", "HF_HUB_CACHE": "/mnt/hf_hub_cache/",
		"MODEL": rec.Model, "MODEL_PREFIX": prefix, "IMAGE": rec.Image, "FRAMEWORK": rec.Framework,
		"PRECISION": rec.Precision, "TP": itoa(p.TP), "PP_SIZE": itoa(pp), "DCP_SIZE": itoa(dcp), "PCP_SIZE": itoa(pcp),
		"EP_SIZE": itoa(p.EP), "DP_ATTENTION": b(p.DPAttn), "CONC": itoa(p.Conc), "SPEC_DECODING": p.Spec,
		"DISAGG": b(false), "RUN_EVAL": "false", "EVAL_ONLY": "false", "RESULT_DIR": "/workspace/results",
		"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache", "DURATION": "3600",
		"AIPERF_FAILED_REQUEST_THRESHOLD": "0.10", "REQUIRE_POWER": "0", "AIPERF_EXPERIMENTAL_FAST": "0",
		"SWEBENCH_USE_MODAL": "true", "MODAL_TOKEN_ID": "<secret>", "MODAL_TOKEN_SECRET": "<secret>",
		"GITHUB_WORKSPACE": dryrun.Workspace, "GITHUB_ACTIONS": "true", "RUNNER_NAME": p.Runner, "RUNNER_TYPE": label,
		"GPU_COUNT": itoa(p.TP * pp * pcp), "USER": "runner", "HOME": "/home/runner", "PATH": "/usr/local/bin:/usr/bin:/bin",
		"KV_OFFLOADING": "", "KV_OFFLOAD_BACKEND": "", "TOTAL_CPU_DRAM_GB": "0", "SCENARIO_TYPE": "fixed-seq-len",
		"SCENARIO_SUBDIR": "fixed_seq_len/", "IS_AGENTIC": "0",
	}
	if agentic {
		env["SCENARIO_TYPE"], env["SCENARIO_SUBDIR"], env["IS_AGENTIC"] = "agentic-coding", "agentic/", "1"
		env["ISL"], env["OSL"], env["MAX_MODEL_LEN"] = "0", "0", "0"
		env["KV_OFFLOADING"], env["KV_OFFLOAD_BACKEND"], env["TOTAL_CPU_DRAM_GB"] = p.KVOffloading, p.KVBackend, dram
		env["DURATION"] = itoa(duration)
		kv := "kvnone"
		if p.KVOffloading != "none" {
			kv = "kv" + p.KVOffloading + "-" + p.KVBackend
		}
		if e.LegacyOffloading {
			// #1201 to #1992: `offloading: cpu`, OFFLOADING, "_offloadcpu"
			env["OFFLOADING"], kv = p.KVOffloading, "offload"+p.KVOffloading
		}
		exp := fmt.Sprintf("%s_tp%d_conc%d_%s", prefix, p.TP, p.Conc, kv)
		if p.Spec != "none" {
			exp += "_spec-" + p.Spec
		}
		env["EXP_NAME"] = exp
	} else {
		env["ISL"], env["OSL"], env["MAX_MODEL_LEN"] = itoa(p.ISL), itoa(p.OSL), itoa(p.ISL+p.OSL+gen.modelLenPad)
		env["EXP_NAME"] = prefix + "_" + gen.expSeqLen(p.ISL, p.OSL)
	}
	env["RESULT_FILENAME"] = fmt.Sprintf("%s_%s_%s_tp%d-pp%d-dcp%d-pcp%d-ep%d-dpa%s_disagg-false_spec-%s_conc%d_%s",
		env["EXP_NAME"], env["PRECISION"], env["FRAMEWORK"], p.TP, pp, dcp, pcp, p.EP, b(p.DPAttn), p.Spec, p.Conc, p.Runner)
	return env
}

// applyEnvSettings applies the settings' launch.env overrides: NAME →
// template, where ${field} is a field of the point's environment
// (${TP}) or of its search-space entry written as in the config
// (${tp}); an empty template removes the variable.
func (r *Rev) applyEnvSettings(p *LaunchPoint) {
	if r.Settings == nil || len(r.Settings.Launch.Env) == 0 {
		return
	}
	fields := map[string]string{"tp": strconv.FormatInt(p.TP, 10), "ep": strconv.FormatInt(p.EP, 10),
		"dp-attn": strconv.FormatBool(p.DPAttn), "conc": strconv.FormatInt(p.Conc, 10), "spec-decoding": p.Spec,
		"kv-offloading": p.KVOffloading, "kv-offload-backend": p.KVBackend, "isl": strconv.FormatInt(p.ISL, 10),
		"osl": strconv.FormatInt(p.OSL, 10), "scenario": p.Scenario, "runner": p.Runner, "key": p.Key}
	names := make([]string, 0, len(r.Settings.Launch.Env))
	for n := range r.Settings.Launch.Env {
		names = append(names, n)
	}
	sort.Strings(names)
	base := make(map[string]string, len(p.Env))
	for k, v := range p.Env {
		base[k] = v
	}
	if slices.ContainsFunc(p.EnvConst, func(n string) bool { _, ok := r.Settings.Launch.Env[n]; return ok }) {
		p.EnvConst = slices.DeleteFunc(slices.Clone(p.EnvConst), func(n string) bool { _, ok := r.Settings.Launch.Env[n]; return ok })
	}
	for _, n := range names {
		t := r.Settings.Launch.Env[n]
		if t == "" {
			delete(p.Env, n)
			continue
		}
		p.Env[n] = expandTemplate(t, func(f string) string {
			if v, ok := fields[f]; ok {
				return v
			}
			return base[f]
		})
	}
}

func expandTemplate(t string, get func(string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(t, "${")
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i])
		b.WriteString(get(t[i+2 : i+j]))
		t = t[i+j+1:]
	}
}

func strOr(v *pyyaml.Value, f, def string) string {
	if x, ok := v.Get(f); ok && x.Kind == pyyaml.Str {
		return x.Str
	}
	return def
}
