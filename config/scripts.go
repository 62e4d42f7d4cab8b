package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// Key → script resolution: which benchmark script runs a recipe.
//
// InferenceX runs a recipe on a GitHub runner with the recipe's runner
// label; the runner's name (configs/runners.yaml lists the names of each
// label) up to its first "_" is the launcher family, and
// runners/launch_<family>.sh picks the script. The launchers were read to
// learn the rules below (InferenceX defaults; .perflog.yaml can replace
// them): a single-node launcher tries path templates in order and runs the
// first that exists; the templates use
//
//	${SCENARIO_SUBDIR}  agentic/ for agentic-coding, fixed_seq_len/ otherwise
//	${MODEL_CODE}       model-prefix up to its first "_" (${EXP_NAME%%_*})
//	${PRECISION} ${FRAMEWORK}
//	${GPU}              the family's GPU (b200-nb → b200)
//	${SPEC_SUFFIX}      _mtp when the search-space entry uses spec-decoding: mtp
//	${FRAMEWORK_SUFFIX} the legacy suffix: _trt for trt (NVIDIA), _atom for atom (MI355X)
//
// Older layouts are tried when the current one misses: scripts directly
// under benchmarks/single_node/ (before #1571) and under benchmarks/
// (before #666). Multi-node recipes resolve to a driver script or to the
// srt-slurm recipe named by CONFIG_FILE in additional-settings.

// ScriptSettings configure the resolution (all optional).
type ScriptSettings struct {
	// Runners is the runner-label file (default configs/runners.yaml,
	// then .github/configs/runners.yaml).
	Runners string `yaml:"runners"`
	// Templates name path templates; Families list, per launcher family,
	// its GPU and the templates it tries in order.
	Templates map[string]string       `yaml:"templates"`
	Families  map[string]FamilyScript `yaml:"families"`
}

// FamilyScript is one launcher family's single-node rule.
type FamilyScript struct {
	GPU       string   `yaml:"gpu"`
	Templates []string `yaml:"templates"` // names of templates (or templates)
	// LegacySuffix maps a framework to its legacy file suffix
	// (${FRAMEWORK_SUFFIX}); default: trt → _trt, atom → _atom.
	LegacySuffix map[string]string `yaml:"legacy-suffix"`
	// RunSuffix is how the family's launcher ran a script before
	// InferenceX #406 (January 2026), which its name ended with: _docker
	// or _slurm ("" for a family of later days).
	RunSuffix string `yaml:"run-suffix"`
}

// DefaultTemplates are the InferenceX single-node templates.
var DefaultTemplates = map[string]string{
	"tagged": "benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_${GPU}_${FRAMEWORK}${SPEC_SUFFIX}.sh",
	"legacy": "benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_${GPU}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh",
	"plain":  "benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_${GPU}${SPEC_SUFFIX}.sh",
}

// DefaultFamilies are the InferenceX launcher families (runners/launch_*.sh
// at the corpus head, and earlier ones).
var DefaultFamilies = map[string]FamilyScript{
	"b200-cw":         {GPU: "b200", Templates: []string{"tagged", "legacy"}},
	"b200-dgxc":       {GPU: "b200", Templates: []string{"tagged", "legacy"}, RunSuffix: "_docker"},
	"b200-dgxc-slurm": {GPU: "b200", Templates: []string{"tagged", "legacy"}},
	"b200-nb":         {GPU: "b200", Templates: []string{"tagged", "legacy"}, RunSuffix: "_slurm"},
	"b300-nv":         {GPU: "b300", Templates: []string{"tagged", "legacy"}},
	"h200-dgxc-slurm": {GPU: "h200", Templates: []string{"tagged", "legacy"}},
	"mi355x-amds":     {GPU: "mi355x", Templates: []string{"tagged", "legacy"}},
	"rtx6000pro-lat":  {GPU: "rtx6000pro", Templates: []string{"tagged", "plain"}},
	"h200-cw":         {GPU: "h200", Templates: []string{"legacy"}, RunSuffix: "_slurm"},
	"h200-nb":         {GPU: "h200", Templates: []string{"legacy"}, RunSuffix: "_slurm"},
	"h100-cr":         {GPU: "h100", Templates: []string{"plain"}, RunSuffix: "_docker"},
	"h100-cw":         {GPU: "h100", Templates: []string{"plain"}, RunSuffix: "_slurm"},
	"h100-dgxc-slurm": {GPU: "h100", Templates: []string{"plain"}},
	"mi300x-amds":     {GPU: "mi300x", Templates: []string{"plain"}, RunSuffix: "_slurm"},
	"mi325x-amds":     {GPU: "mi325x", Templates: []string{"plain"}},
	"mi325x-tw":       {GPU: "mi325x", Templates: []string{"plain"}},
	// families the history had before the head's
	"b200-nv":             {GPU: "b200", Templates: []string{"legacy"}, RunSuffix: "_slurm"},
	"h200-nv":             {GPU: "h200", Templates: []string{"legacy"}, RunSuffix: "_slurm"},
	"mi300x-amd":          {GPU: "mi300x", Templates: []string{"plain"}, RunSuffix: "_docker"},
	"mi300x-cr":           {GPU: "mi300x", Templates: []string{"plain"}, RunSuffix: "_docker"},
	"mi325x-amd":          {GPU: "mi325x", Templates: []string{"plain"}, RunSuffix: "_slurm"},
	"mi355x-amds-agentic": {GPU: "mi355x", Templates: []string{"tagged", "legacy"}},
	"b200-nvd":            {GPU: "b200", Templates: []string{"legacy"}, RunSuffix: "_docker"},
	"mi355x-amd":          {GPU: "mi355x", Templates: []string{"plain"}, RunSuffix: "_slurm"},
	"b200-nscale-slurm":   {},
	"gb200-nv":            {},
	"gb300-nv":            {},
}

// Resolver resolves recipe keys to the files that run them at one
// revision.
type Resolver struct {
	// Labels maps a runner label to its runner names (runners.yaml).
	Labels map[string][]string
	// Hardware is each runner label's node, as runners.yaml describes it
	// (shared between resolvers: read only).
	Hardware map[string]Hardware
	// Families are the launcher families with a launcher script.
	Families  map[string]FamilyScript
	Templates map[string]string
	// Exists reports whether a file exists at the revision.
	Exists func(path string) bool
}

// Runners is what a runner labels file (configs/runners.yaml) says.
type Runners struct {
	// Labels maps a runner label to its runner names.
	Labels map[string][]string
	// Hardware maps a runner label to its node.
	Hardware map[string]Hardware
}

// Hardware is a runner's node (0: not said).
type Hardware struct{ DRAMMiB, GPUs int64 }

// ParseRunners reads a runner labels file. A history's dry runs read the
// same few versions at every commit: recipe's SweepCache keeps them.
func ParseRunners(data []byte) (*Runners, error) {
	v, err := pyyaml.Load(data, pyyaml.Options{})
	if err != nil {
		return nil, fmt.Errorf("runners: %w", err)
	}
	rs := &Runners{Labels: map[string][]string{}, Hardware: map[string]Hardware{}}
	labels, _ := v.Get("labels")
	if labels == nil && v.Kind == pyyaml.Map {
		labels = v // before labels: (2025): the labels at the top
	}
	if labels != nil && labels.Kind == pyyaml.Map {
		for _, p := range labels.Pairs {
			if p.Value.Kind != pyyaml.Seq {
				continue
			}
			for _, it := range p.Value.Items {
				if it.Kind == pyyaml.Str {
					rs.Labels[p.Key.Str] = append(rs.Labels[p.Key.Str], it.Str)
				}
			}
		}
	}
	if hw, _ := v.Get("hardware"); hw != nil && hw.Kind == pyyaml.Map {
		for _, p := range hw.Pairs {
			rs.Hardware[p.Key.Str] = Hardware{DRAMMiB: int64Of(p.Value, "available-cpu-dram-mib"), GPUs: int64Of(p.Value, "gpus-per-node")}
		}
	}
	return rs, nil
}

// int64Of is v's integer field f (0 when it is not one).
func int64Of(v *pyyaml.Value, f string) int64 {
	if x, ok := v.Get(f); ok && x.Kind == pyyaml.Int && x.Int.IsInt64() {
		return x.Int.Int64()
	}
	return 0
}

// NewResolver builds a resolver from the runner labels (ParseRunners of
// runners.yaml; nil: none, not changed) and the list of launcher scripts
// at a revision.
func NewResolver(s *Settings, runners *Runners, launchers []string, exists func(string) bool) (*Resolver, error) {
	r := &Resolver{Labels: map[string][]string{}, Families: map[string]FamilyScript{}, Templates: map[string]string{}, Exists: exists}
	for k, v := range DefaultTemplates {
		r.Templates[k] = v
	}
	fams := DefaultFamilies
	if s != nil && len(s.Scripts.Families) > 0 {
		fams = s.Scripts.Families
	}
	if s != nil {
		for k, v := range s.Scripts.Templates {
			r.Templates[k] = v
		}
	}
	for _, l := range launchers {
		base := l[strings.LastIndex(l, "/")+1:]
		if !strings.HasPrefix(base, "launch_") || !strings.HasSuffix(base, ".sh") {
			continue
		}
		fam := strings.TrimSuffix(strings.TrimPrefix(base, "launch_"), ".sh")
		r.Families[fam] = fams[fam] // a family without a rule resolves no single-node script
	}
	if runners != nil {
		for k, v := range runners.Labels {
			r.Labels[k] = slices.Clone(v)
		}
		r.Hardware = runners.Hardware
	}
	return r, nil
}

// FamiliesOf returns the launcher families a runner label runs on: the
// families of its runner names, else (a label runners.yaml does not list)
// the family named like the label or starting with it.
func (r *Resolver) FamiliesOf(label string) []string {
	seen := map[string]bool{}
	var out []string
	for _, name := range r.Labels[label] {
		f, _, _ := strings.Cut(name, "_")
		if _, ok := r.Families[f]; ok && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if len(out) > 0 {
		return out
	}
	l := strings.TrimPrefix(label, "cluster:")
	if _, ok := r.Families[l]; ok {
		return []string{l}
	}
	for f := range r.Families {
		if strings.HasPrefix(f, l+"-") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// Resolution is how one variant of a recipe (a launcher family, a
// scenario, a spec-decoding setting) resolves.
type Resolution struct {
	Key       string
	Family    string
	Scenario  string // fixed-seq-len, agentic-coding
	Spec      string // the spec-decoding of the search-space entries
	Multinode bool
	// Script is the file run ("" when none resolves); Tried lists the
	// candidates in order.
	Script string
	Tried  []string
	// Recipe is the srt-slurm recipe of a multi-node variant (CONFIG_FILE).
	Recipe string
	// Note explains a variant without a script.
	Note string
}

// Resolve returns every variant of a recipe with the script that runs it.
func (r *Resolver) Resolve(rec *Recipe) []Resolution {
	key, label, fw, prec, mn := rec.Key, rec.Runner, rec.Framework, rec.Precision, rec.Multinode
	code, _, _ := strings.Cut(rec.ModelPrefix, "_")
	fams := r.FamiliesOf(label)
	none := fmt.Sprintf("no launcher for runner %q", label)
	if len(fams) == 0 {
		if !mn {
			return []Resolution{{Key: key, Multinode: mn, Note: none}}
		}
		// a multi-node driver is named after the GPU, which the label
		// starts with ("mi355x-disagg"), whichever launcher runs it
		fams = []string{""}
	}
	var out []Resolution
	for _, fam := range fams {
		for _, sv := range scenarioVariants(rec.raw()) {
			res := Resolution{Key: key, Family: fam, Scenario: sv.scenario, Spec: sv.spec, Multinode: mn}
			switch {
			case mn && fam == "":
				gpu, _, _ := strings.Cut(label, "-")
				if r.resolveMultinode(&res, gpu, code, prec, fw, sv.settings); res.Script == "" && res.Recipe == "" {
					res.Note = none
				}
			case mn:
				gpu, _, _ := strings.Cut(fam, "-")
				r.resolveMultinode(&res, gpu, code, prec, fw, sv.settings)
			default:
				r.resolveSingle(&res, code, prec, fw)
			}
			out = append(out, res)
		}
	}
	return out
}

func (r *Resolver) resolveSingle(res *Resolution, code, prec, fw string) {
	rule := r.Families[res.Family]
	if len(rule.Templates) == 0 {
		res.Note = fmt.Sprintf("launch_%s.sh runs no single-node script", res.Family)
		return
	}
	sub := "fixed_seq_len/"
	if res.Scenario == "agentic-coding" {
		sub = "agentic/"
	}
	spec := ""
	if res.Spec == "mtp" {
		spec = "_mtp"
	}
	legacy := rule.LegacySuffix
	if legacy == nil {
		legacy = map[string]string{"trt": "_trt", "atom": "_atom"}
	}
	vars := map[string]string{"${SCENARIO_SUBDIR}": sub, "${MODEL_CODE}": code, "${PRECISION}": prec, "${GPU}": rule.GPU,
		"${FRAMEWORK}": fw, "${SPEC_SUFFIX}": spec, "${FRAMEWORK_SUFFIX}": legacy[fw]}
	try := func(t string, vars map[string]string) bool {
		p := t
		for k, v := range vars {
			p = strings.ReplaceAll(p, k, v)
		}
		res.Tried = append(res.Tried, p)
		if r.Exists(p) {
			res.Script = p
			return true
		}
		return false
	}
	for _, layout := range []func(string) string{
		func(t string) string { return t },
		// before #1571: no fixed_seq_len/ directory
		func(t string) string { return strings.ReplaceAll(t, "${SCENARIO_SUBDIR}", "${OLD_SUBDIR}") },
		// before #666: scripts under benchmarks/
		func(t string) string {
			return strings.ReplaceAll(strings.Replace(t, "benchmarks/single_node/", "benchmarks/", 1), "${SCENARIO_SUBDIR}", "")
		},
		// before #406: named for how the launcher ran them (_slurm.sh)
		func(t string) string {
			if rule.RunSuffix == "" {
				return ""
			}
			t = strings.ReplaceAll(strings.Replace(t, "benchmarks/single_node/", "benchmarks/", 1), "${SCENARIO_SUBDIR}", "")
			return strings.TrimSuffix(t, ".sh") + rule.RunSuffix + ".sh"
		},
	} {
		old := ""
		if sub == "agentic/" {
			old = "agentic/"
		}
		vars["${OLD_SUBDIR}"] = old
		for _, name := range rule.Templates {
			t, ok := r.Templates[name]
			if !ok {
				t = name
			}
			if p := layout(t); p != "" && try(p, vars) {
				return
			}
		}
	}
	res.Note = "no candidate script exists"
}

func (r *Resolver) resolveMultinode(res *Resolution, gpu, code, prec, fw string, settings map[string]string) {
	var cands []string
	sub := ""
	if res.Scenario == "agentic-coding" {
		sub = "agentic/"
	}
	switch {
	case strings.HasSuffix(fw, "-disagg") && gpu == "mi355x":
		cands = append(cands, fmt.Sprintf("benchmarks/multi_node/%s%s_%s_mi355x_%s.sh", sub, code, prec, fw))
	case fw == "tilert":
		cands = append(cands, fmt.Sprintf("benchmarks/multi_node/%s_%s_%s_%s-disagg.sh", code, prec, gpu, fw))
	case fw == "llmd-vllm":
		cands = append(cands, fmt.Sprintf("benchmarks/multi_node/%s_%s_%s_llmd-vllm-disagg.sh", code, prec, gpu))
	}
	if cf := settings["CONFIG_FILE"]; cf != "" {
		var tried []string
		res.Recipe, res.Note, tried = r.RecipeFile(cf)
		res.Tried = append(res.Tried, tried...)
		if res.Scenario == "agentic-coding" { // srt-slurm agentic recipes hand off to it
			cands = append(cands, "benchmarks/multi_node/agentic_srt.sh")
		}
	}
	if len(cands) == 0 && settings["CONFIG_FILE"] == "" {
		cands = append(cands, fmt.Sprintf("benchmarks/multi_node/%s_%s_%s_%s.sh", code, prec, gpu, fw))
	}
	for _, p := range cands {
		res.Tried = append(res.Tried, p)
		if r.Exists(p) {
			res.Script = p
			break
		}
	}
	if res.Script == "" && res.Recipe == "" && res.Note == "" {
		res.Note = "no driver script or recipe exists"
	}
}

// RecipeFile finds the srt-slurm recipe a multi-node entry's CONFIG_FILE
// names in the repository (a "recipes/..." path is looked up under
// benchmarks/multi_node/srt-slurm-recipes/; a ":selector" suffix names an
// override of the file). note says why there is none.
func (r *Resolver) RecipeFile(cf string) (path, note string, tried []string) {
	rel := strings.TrimPrefix(cf, "recipes/")
	if i := strings.Index(rel, ":"); i >= 0 {
		rel = rel[:i] // recipes/x.yaml:override
	}
	for _, p := range []string{cf, "benchmarks/multi_node/srt-slurm-recipes/" + rel} {
		tried = append(tried, p)
		if r.Exists(p) {
			return p, "", tried
		}
	}
	if strings.HasPrefix(cf, "recipes/") {
		note = "the srt-slurm recipe " + cf + " comes from the upstream srt-slurm repository"
	}
	return "", note, tried
}

type variant struct {
	scenario, spec string
	settings       map[string]string // additional-settings KEY=VALUE (prefill, then decode: decode wins)
}

// scenarioVariants lists the (scenario, spec-decoding, settings)
// combinations of a recipe's search-space entries.
func scenarioVariants(recipe *pyyaml.Value) []variant {
	var out []variant
	seen := map[string]bool{}
	add := func(v variant) {
		k := v.scenario + "|" + v.spec + "|" + v.settings["CONFIG_FILE"]
		if !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	for _, sc := range scenarios(recipe) {
		for _, it := range sc.Items {
			for i := range it.Entries {
				e := &it.Entries[i]
				add(variant{scenario: sc.Name, spec: e.Spec.Or("none"), settings: e.Settings()})
			}
		}
	}
	if len(out) == 0 {
		out = append(out, variant{scenario: "fixed-seq-len", spec: "none", settings: map[string]string{}})
	}
	return out
}
