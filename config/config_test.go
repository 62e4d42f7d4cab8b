package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflog/perflog/internal/pyyaml"
)

func master(t *testing.T, files ...File) *Master {
	t.Helper()
	m, err := LoadMaster(files)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestResolveLikeTheIncumbent(t *testing.T) {
	// utils/test_process_changelog.py: ["config-*","config-a"] over
	// {config-b, config-a, other} → ["config-b","config-a"]
	m := master(t, File{"a.yaml", []byte("config-b: {}\nconfig-a: {}\nother: {}\n")})
	got, errs := m.Resolve([]string{"config-*", "config-a"})
	if len(errs) != 0 || !reflect.DeepEqual(got, []string{"config-b", "config-a"}) {
		t.Fatalf("Resolve = %v, %v", got, errs)
	}
	_, errs = m.Resolve([]string{"zzz-*", "config-?", "confg-a"})
	if len(errs) != 3 {
		t.Fatalf("errs = %v", errs)
	}
	if errs[0].Error() != "No config keys matched the wildcard pattern 'zzz-*' in master configs." {
		t.Errorf("wildcard message: %s", errs[0])
	}
	if errs[1].Error() != "Config key 'config-?' not found in master configs." {
		t.Errorf("'?' must be literal: %s", errs[1])
	}
	if len(errs[2].Closest) == 0 || errs[2].Closest[0] != "config-a" {
		t.Errorf("closest to confg-a = %v", errs[2].Closest)
	}
	// regexp metacharacters in keys are literal
	m2 := master(t, File{"a.yaml", []byte("glm5.1-fp8: {}\nglm5x1-fp8: {}\n")})
	got, _ = m2.Resolve([]string{"glm5.1-*"})
	if !reflect.DeepEqual(got, []string{"glm5.1-fp8"}) {
		t.Fatalf("dot must be literal: %v", got)
	}
}

func TestLoadMasterErrors(t *testing.T) {
	cases := []struct {
		files []File
		want  string
	}{
		{[]File{{"a.yaml", nil}}, "Input file 'a.yaml' does not exist."},
		{[]File{{"a.yaml", []byte("- x\n")}}, "Config file 'a.yaml' must contain a dictionary"},
		{[]File{{"a.yaml", []byte("a*b: {}\n")}}, "Wildcard '*' is not allowed in master config keys: 'a*b'"},
		{[]File{{"a.yaml", []byte("k: {}\n")}, {"b.yaml", []byte("k: {}\nj: {}\n")}}, "Duplicate configuration keys found in 'b.yaml': k"},
		{[]File{{"a.yaml", []byte("k: [\n")}}, "a.yaml"},
	}
	for _, c := range cases {
		_, err := LoadMaster(c.files)
		if !errors.Is(err, ErrMasterInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadMaster(%v) = %v, want %q", c.files[0].Path, err, c.want)
		}
	}
	// duplicates inside one file merge, last wins (PyYAML safe_load)
	m := master(t, File{"a.yaml", []byte("k: 1\nk: 2\n")})
	if v := m.Recipes["k"].raw(); v.Kind != pyyaml.Int || v.Int.Int64() != 2 || len(m.Keys) != 1 {
		t.Fatalf("in-file duplicate: %v %v", m.Keys, v.Repr())
	}
}

func TestSettings(t *testing.T) {
	s, err := ParseSettings("s", []byte("changelog:\n  file: x.yaml\ngithub:\n  repository: o/r\nrules:\n  append-only/not-at-end: warning\n  pr-link/*: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.ChangelogPath() != "x.yaml" || s.Repository() != "o/r" {
		t.Fatalf("%+v", s)
	}
	if s.Severity("append-only/not-at-end") != "warning" || s.Severity("pr-link/mismatch") != "off" || s.Severity("format/tab") != "" {
		t.Fatal("severity overrides")
	}
	for _, c := range []struct {
		id, def, want string
		on            bool
	}{
		{"append-only/not-at-end", "error", "warning", true},
		{"pr-link/mismatch", "error", "", false},
		{"format/tab", "info", "info", true},
	} {
		if sev, on := s.SeverityOf(c.id, c.def); sev != c.want || on != c.on {
			t.Errorf("SeverityOf(%s, %s) = %q, %v; want %q, %v", c.id, c.def, sev, on, c.want, c.on)
		}
	}
	var nilS *Settings
	if sev, on := nilS.SeverityOf("x/y", "error"); sev != "error" || !on {
		t.Error("nil settings override nothing")
	}
	if nilS.ChangelogPath() != DefaultChangelog || nilS.Repository() != DefaultRepository || len(nilS.MasterCandidates()) != 2 {
		t.Fatal("nil settings must give defaults")
	}
	for _, bad := range []string{"rules:\n  x/y: fatal\n", "github:\n  repository: nope\n", "typo: 1\n", "rules: [\n"} {
		if _, err := ParseSettings("s", []byte(bad)); !errors.Is(err, ErrSettings) {
			t.Errorf("ParseSettings(%q) = %v, want ErrSettings", bad, err)
		}
	}
}

// TestUnknownSettingNamesItsSection: a misspelt key is named with its
// section and the keys the section takes, not with perflog's Go types.
func TestUnknownSettingNamesItsSection(t *testing.T) {
	for in, want := range map[string]string{
		"typo: 1\n":              `line 1: unknown setting "typo" (known: changelog, github, rules, ignore-revs, scripts, ignore-revs-file, launch)`,
		"changelog:\n  fle: x\n": `line 2: unknown setting "fle" under changelog (known: file, master-configs)`,
		"github:\n  repo: a/b\n": `line 2: unknown setting "repo" under github (known: repository, aliases, former-repositories)`,
		"scripts:\n  families:\n    x:\n      gpux: 1\n": `line 4: unknown setting "gpux" under scripts.families.* (known: gpu, templates, legacy-suffix, run-suffix)`,
	} {
		_, err := ParseSettings("s", []byte(in))
		if !errors.Is(err, ErrSettings) || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "config.") {
			t.Errorf("ParseSettings(%q) = %v\nwant ...%s", in, err, want)
		}
	}
}

func TestPointsAndConc(t *testing.T) {
	v, err := pyyaml.Load([]byte("{conc-start: 4, conc-end: 48}"), pyyaml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := expandConc(v); !reflect.DeepEqual(got, []int64{4, 8, 16, 32, 48}) {
		t.Fatalf("expandConc = %v", got)
	}
	base := []byte("k:\n  image: a\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 8, conc-list: [4, 8]}\n")
	more := []byte("k:\n  image: a\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 8, conc-list: [4, 8, 16]}\n")
	fewer := []byte("k:\n  image: a\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 8, conc-list: [4]}\n")
	sel := map[string]map[string]bool{"k": {"fixed-seq-len": true, "agentic-coding": true}}
	b := master(t, File{"a", base})
	if err := AppendOnlyCheck(b, nil, master(t, File{"a", more}), []string{"k"}, sel); err != nil {
		t.Fatalf("adding a point: %v", err)
	}
	if err := AppendOnlyCheck(b, nil, master(t, File{"a", base}), []string{"k"}, sel); err == nil || !strings.Contains(err.Error(), "did not add any generated points") {
		t.Fatalf("no change: %v", err)
	}
	if err := AppendOnlyCheck(b, nil, master(t, File{"a", fewer}), []string{"k"}, sel); err == nil || !strings.Contains(err.Error(), "may not remove existing concurrency points: [8]") {
		t.Fatalf("removing a point: %v", err)
	}
	if err := AppendOnlyCheck(b, nil, master(t, File{"a", more}), []string{"j"}, map[string]map[string]bool{"j": {}}); err == nil || !strings.Contains(err.Error(), "missing: ['j']") {
		t.Fatalf("missing config: %v", err)
	}
}

// TestRowsOfBothLayouts: the older seq-len-configs layout (InferenceX
// until December 2025) gives the same rows as scenarios.fixed-seq-len.
func TestRowsOfBothLayouts(t *testing.T) {
	old := "k:\n  image: a\n  seq-len-configs:\n  - isl: 1024\n    osl: 1024\n    search-space:\n    - { tp: 4, conc-start: 4, conc-end: 64 }\n  - isl: 8192\n    osl: 1024\n    search-space:\n    - { tp: 8, ep: 8, dp-attn: true, conc-list: [16] }\n"
	cur := "k:\n  image: a\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 4, conc-start: 4, conc-end: 64 }\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 8, dp-attn: true, conc-list: [16] }\n"
	rows := func(text string) []Row {
		m := master(t, File{"a.yaml", []byte(text)})
		rs := m.Recipes["k"].Rows()
		for i := range rs {
			rs[i].Line, rs[i].Path = 0, "" // the layouts indent and name differently
		}
		return rs
	}
	got, want := rows(old), rows(cur)
	if len(want) != 2 || want[0].ISL != 1024 || !reflect.DeepEqual(want[0].Conc, []int64{4, 8, 16, 32, 64}) || want[1].Scenario != "fixed-seq-len" {
		t.Fatalf("scenarios layout: %+v", want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("seq-len-configs rows\n got %+v\nwant %+v", got, want)
	}
}

// FuzzParseSettings: any settings text parses or is ErrSettings, never a
// panic, and every path it accepts stays inside the repository.
func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{
		"changelog:\n  file: perf-changelog.yaml\n", "changelog:\n  file: ../../outside/x.sh\n",
		"changelog:\n  master-configs: [configs/a.yaml, /etc/passwd]\n", "rules:\n  pr-link/*: off\n",
		"github:\n  repository: a/b\n", "scripts:\n  runners: ./x/../../y\n", "ignore-revs-file: .git-blame-ignore-revs\n",
		"&a [*a, *a]", "{{{", "changelog: {file: 'a\\\\b'}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSettings("s.yaml", []byte(text))
		if err != nil {
			if !errors.Is(err, ErrSettings) {
				t.Fatalf("%q: %v is not ErrSettings", text, err)
			}
			return
		}
		for _, p := range append([]string{s.Changelog.File, s.Scripts.Runners, s.IgnoreRevsFile}, s.Changelog.MasterConfigs...) {
			if p != "" && (!filepath.IsLocal(p) || strings.Contains(p, "..") && !filepath.IsLocal(filepath.Clean(p))) {
				t.Fatalf("%q: path %q leaves the repository", text, p)
			}
		}
	})
}

func TestCheckRepoPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"perf-changelog.yaml": true, "configs/amd-master.yaml": true, "a/b/../c.yaml": false,
		"../x.yaml": false, "../../outside/x.sh": false, "/etc/passwd": false, "./x.yaml": false,
		"a\\b.yaml": false, "": false, "..": false, "a/..": false,
	} {
		if err := CheckRepoPath(p); (err == nil) != ok {
			t.Errorf("CheckRepoPath(%q) = %v, want ok %v", p, err, ok)
		}
	}
}

// FuzzGlobMatch: GlobMatch answers as the compiled GlobRegexp does.
func FuzzGlobMatch(f *testing.F) {
	for _, c := range [][2]string{{"dsr1*", "dsr1-fp4"}, {"*-fp4-*", "dsr1-fp4-b200"}, {"a*b*a", "aba"}, {"a*a", "a"}, {"*", ""}, {"k*\n*", "k\nx"}, {"a**b", "ab"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		re := GlobRegexp(pattern) // never a panic
		if !utf8.ValidString(pattern) || !utf8.ValidString(key) {
			return // the expression reads invalid bytes as U+FFFD, GlobMatch as bytes
		}
		if got, want := GlobMatch(pattern, key), re.MatchString(key); got != want {
			t.Errorf("GlobMatch(%q, %q) = %v, the expression says %v", pattern, key, got, want)
		}
	})
}
