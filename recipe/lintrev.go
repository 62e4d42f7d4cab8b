package recipe

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe/lint"
	"github.com/perflog/perflog/recipe/revfs"
)

// LintReport is the outcome of LintRev.
type LintReport struct {
	Scripts  []string       // the scripts linted, sorted
	Findings []lint.Finding // sorted by file and line
	// Unparsed counts the scripts that do not parse.
	Unparsed int
}

// LintRev lints scripts of a revision: each on its own (Lint) and against
// every recipe point that runs it (CheckRuns). paths are files or
// directories (every .sh below them); none means benchmarks/ and
// runners/.
func LintRev(r *Rev, paths []string) (*LintReport, error) {
	if len(paths) == 0 {
		paths = []string{"benchmarks", "runners"}
	}
	set := map[string]bool{}
	for _, p := range paths {
		p = strings.Trim(p, "/")
		if revfs.Exists(r.Files, p) {
			set[p] = true
			continue
		}
		files, err := revfs.WalkFiles(r.Files, p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if strings.HasSuffix(f, ".sh") {
				set[f] = true
			}
		}
	}
	rep := &LintReport{}
	for p := range set {
		rep.Scripts = append(rep.Scripts, p)
	}
	sort.Strings(rep.Scripts)
	if len(rep.Scripts) == 0 {
		return rep, nil
	}
	// which recipe points each script runs (a revision without master
	// configs lints scripts on their own)
	runs := map[string][]lint.Run{}
	if keys, err := r.Keys(); err == nil {
		for _, k := range keys {
			byScript, err := RunsOf(r, k)
			if err != nil {
				continue
			}
			for p, rs := range byScript {
				if set[p] {
					runs[p] = append(runs[p], rs...)
				}
			}
		}
	}
	for _, p := range rep.Scripts {
		s, err := r.Script(p)
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue
		}
		if s.ParseErr != nil {
			rep.Unparsed++
		}
		rep.Findings = append(rep.Findings, lint.Lint(s)...)
		rep.Findings = append(rep.Findings, lint.CheckRuns(s, runs[p])...)
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return rep, nil
}

// Configured applies the rule severities of settings to findings: a rule
// set to "off" drops its findings, another severity replaces theirs.
func Configured(fs []lint.Finding, s *config.Settings) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		sev, on := s.SeverityOf(f.Rule, f.Severity)
		if !on {
			continue
		}
		f.Severity = sev
		out = append(out, f)
	}
	return out
}

// RunsOf lists the search-space points of a recipe with the scripts that
// run them: per script, the rows it serves (by scenario and spec
// decoding, as the launchers pick scripts).
func RunsOf(r *Rev, key string) (map[string][]lint.Run, error) {
	rec, ok, err := r.Recipe(key)
	if err != nil || !ok {
		return nil, err
	}
	res, err := r.Runs(key)
	if err != nil {
		return nil, err
	}
	out := map[string][]lint.Run{}
	for _, row := range rec.Rows() {
		for _, rs := range res {
			if rs.Script == "" || rs.Scenario != row.Scenario || rs.Spec != row.Spec {
				continue
			}
			dpa := false
			for _, d := range row.DPA {
				dpa = dpa || d
			}
			out[rs.Script] = append(out[rs.Script], lint.Run{Key: key, File: rec.File, Line: row.Line,
				KVOffloading: row.KVOffloading, KVBackend: row.KVBackend, DPAttn: dpa})
		}
	}
	return out, nil
}

// CheckRecipe checks a recipe against the scripts that run it (CheckRuns
// for each script with the points it serves).
func CheckRecipe(r *Rev, key string) []lint.Finding {
	runs, err := RunsOf(r, key)
	if err != nil {
		return nil
	}
	var out []lint.Finding
	for _, p := range slices.Sorted(maps.Keys(runs)) {
		s, err := r.Script(p)
		if err != nil || s == nil {
			continue
		}
		out = append(out, lint.CheckRuns(s, runs[p])...)
	}
	return out
}

// upstreamRepos are the image repositories of the upstream engines
// (PR review checklist: vLLM from hub.docker.com/u/vllm, SGLang from
// hub.docker.com/u/lmsysorg).
var upstreamRepos = map[string]string{"vllm": "vllm/", "sglang": "lmsysorg/"}

// CheckImage warns when a vLLM or SGLang recipe runs an image that is
// not from the engine's upstream repository.
func CheckImage(r *Rev, key string) []lint.Finding {
	rec, ok, err := r.Recipe(key)
	if err != nil || !ok {
		return nil
	}
	fw := rec.Framework
	if fw == "" {
		return nil
	}
	engine := ""
	for e := range upstreamRepos {
		if fw == e || strings.HasSuffix(fw, "-"+e) || strings.HasPrefix(fw, e+"-") {
			engine = e
		}
	}
	if engine == "" {
		return nil
	}
	var out []lint.Finding
	said := map[string]bool{}
	for _, im := range r.Images(key) {
		ref := strings.ToLower(im.Text)
		ref = strings.TrimPrefix(strings.TrimPrefix(ref, "docker.io/"), "index.docker.io/")
		if strings.HasPrefix(ref, upstreamRepos[engine]) || !strings.ContainsAny(ref, "/:") || said[ref] {
			// (a srt-slurm container alias, "dynamo-sglang", names an
			// image of the cluster's own table: which one is not known
			// here; an image is said once, at its first file)
			continue
		}
		said[ref] = true
		out = append(out, lint.Finding{Rule: lint.RuleNonUpstreamImage, Severity: lint.Severities[lint.RuleNonUpstreamImage], File: im.File, Line: im.Line, Key: key, Source: im.Text,
			Message: fmt.Sprintf("%s (framework %s) runs %s, which is not from the upstream %s repository (%s*): the review checklist allows that only for new hardware or model architectures upstream does not support yet", key, fw, im.Text, engine, upstreamRepos[engine])})
	}
	return out
}
