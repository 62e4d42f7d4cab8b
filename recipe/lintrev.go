package recipe

import (
	"sort"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe/revfs"
)

// LintReport is the outcome of LintRev.
type LintReport struct {
	Scripts  []string  // the scripts linted, sorted
	Findings []Finding // sorted by file and line
	// Unparsed counts the scripts that do not parse.
	Unparsed int
}

// LintRev lints scripts of a revision: each on its own (Lint) and against
// every recipe point that runs it (CheckRuns). paths are files or
// directories; none means every .sh under benchmarks/ and runners/. The
// files are listed with list (every file below a directory).
func LintRev(r *Rev, paths []string, list func(dir string) ([]string, error)) (*LintReport, error) {
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
		files, err := list(p)
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
	runs := map[string][]Run{}
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
		rep.Findings = append(rep.Findings, Lint(s)...)
		rep.Findings = append(rep.Findings, CheckRuns(s, runs[p])...)
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
func Configured(fs []Finding, s *config.Settings) []Finding {
	var out []Finding
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
