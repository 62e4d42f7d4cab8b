package provenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
)

// scripted builds an in-memory repository commit by commit.
type scripted struct {
	t    *testing.T
	r    *git.Repository
	w    *git.Worktree
	when time.Time
	// by subject, for assertions
	commits map[string]plumbing.Hash
}

func newScripted(t *testing.T) *scripted {
	t.Helper()
	r, err := git.InitWithOptions(memory.NewStorage(), memfs.New(), git.InitOptions{DefaultBranch: plumbing.Main})
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &scripted{t: t, r: r, w: w, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), commits: map[string]plumbing.Hash{}}
}

// commit writes files ("" deletes one) and commits them; extra parents
// make a merge commit.
func (s *scripted) commit(msg string, files map[string]string, parents ...plumbing.Hash) plumbing.Hash {
	s.t.Helper()
	for p, c := range files {
		if c == "" {
			if _, err := s.w.Remove(p); err != nil {
				s.t.Fatal(err)
			}
			continue
		}
		if err := util.WriteFile(s.w.Filesystem, p, []byte(c), 0o644); err != nil {
			s.t.Fatal(err)
		}
		if _, err := s.w.Add(p); err != nil {
			s.t.Fatal(err)
		}
	}
	s.when = s.when.Add(time.Hour)
	sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: s.when}
	opts := &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true}
	if len(parents) > 0 {
		head, err := s.r.Head()
		if err != nil {
			s.t.Fatal(err)
		}
		opts.Parents = append([]plumbing.Hash{head.Hash()}, parents...)
	}
	h, err := s.w.Commit(msg, opts)
	if err != nil {
		s.t.Fatal(err)
	}
	s.commits[msg] = h
	return h
}

func (s *scripted) head() plumbing.Hash {
	h, err := s.r.Head()
	if err != nil {
		s.t.Fatal(err)
	}
	return h.Hash()
}

func (s *scripted) build(o Options) *History {
	s.t.Helper()
	if o.Head.IsZero() {
		o.Head = s.head()
	}
	h, err := Build(context.Background(), gitscan.FromRepository(s.r), o)
	if err != nil {
		s.t.Fatal(err)
	}
	return h
}

func entry(keys, desc, link string) string {
	var b strings.Builder
	b.WriteString("- config-keys:\n")
	for _, k := range strings.Split(keys, ",") {
		b.WriteString("    - " + k + "\n")
	}
	b.WriteString("  description:\n")
	for _, d := range strings.Split(desc, "|") {
		b.WriteString("    - \"" + d + "\"\n")
	}
	if link != "" {
		b.WriteString("  pr-link: " + link + "\n")
	}
	return b.String()
}

func pull(n int) string {
	return fmt.Sprintf("https://github.com/SemiAnalysisAI/InferenceX/pull/%d", n)
}

func file(entries ...string) string { return strings.Join(entries, "\n") }

type want struct {
	verdict Verdict
	intro   string // subject of the introducing commit
	events  string // event kinds, space separated
}

func checkAudit(t *testing.T, rep *AuditReport, wants ...want) {
	t.Helper()
	if len(rep.Entries) != len(wants) {
		t.Fatalf("audit has %d entries, want %d", len(rep.Entries), len(wants))
	}
	for i, w := range wants {
		e := rep.Entries[i]
		var kinds []string
		for _, ev := range e.Events {
			kinds = append(kinds, string(ev.Type))
		}
		intro := ""
		if e.Introduced != nil {
			intro = e.Introduced.Subject
		}
		if e.Verdict != w.verdict || intro != w.intro || strings.Join(kinds, " ") != w.events {
			t.Errorf("entry %d: verdict %s, introduced by %q, events %v (%s); want %s, %q, %q",
				e.Index, e.Verdict, intro, kinds, e.Reason, w.verdict, w.intro, w.events)
		}
	}
}

const recipeA = `dsr1-fp8-mi355x-sglang:
  image: lmsysorg/sglang:v0.5.9-rocm700-mi35x
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: mi355x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, conc-list: [4, 8, 16] }
      - { tp: 8, conc-start: 4, conc-end: 64 }
`

func TestAuditLifecycle(t *testing.T) {
	s := newScripted(t)
	e1 := entry("dsr1-fp8-mi355x-sglang", "Add the recipe", pull(1))
	e2 := entry("dsr1-fp8-mi355x-sglang", "Bump image to v0.5.9", "XXX")
	e3 := entry("dsr1-fp8-mi355x-sglang", "Try TP8", pull(3))
	s.commit("Add recipe (#1)", map[string]string{"configs/amd-master.yaml": recipeA, "perf-changelog.yaml": file(e1)})
	s.commit("Bump image (#2)", map[string]string{"perf-changelog.yaml": file(e1, e2)})
	// a reformat (quotes, indentation) and a pr-link correction of e2
	e1r := strings.ReplaceAll(strings.ReplaceAll(e1, `"`, `'`), "    - ", "  - ")
	e2fixed := strings.Replace(e2, "XXX", pull(2), 1)
	s.commit("Fix link of #2 (#4)", map[string]string{"perf-changelog.yaml": file(e1r, e2fixed)})
	s.commit("Try TP8 (#3)", map[string]string{"perf-changelog.yaml": file(e1r, e2fixed, e3)})
	s.commit(`Revert "Try TP8 (#3)" (#5)`, map[string]string{"perf-changelog.yaml": file(e1r, e2fixed)})
	// re-land: the identical entry, moved to the top (a reorder)
	s.commit("Re-land TP8 (#6)", map[string]string{"perf-changelog.yaml": file(e3, e1r, e2fixed)})
	// an entry copied from the one before, link and all
	e7 := entry("dsr1-fp8-mi355x-sglang", "Retrigger the sweep", pull(3))
	s.commit("Retrigger (#7)", map[string]string{"perf-changelog.yaml": file(e3, e1r, e2fixed, e7)})
	// a direct push without a PR number
	e8 := entry("dsr1-fp8-mi355x-sglang", "Direct push", pull(8))
	s.commit("Update image directly", map[string]string{"perf-changelog.yaml": file(e3, e1r, e2fixed, e7, e8)})
	// a re-trigger: e3 again, word for word, linking #3
	s.commit("Re-run the TP8 sweep (#9)", map[string]string{"perf-changelog.yaml": file(e3, e1r, e2fixed, e7, e8, e3)})

	h := s.build(Options{Parts: PartChangelog})
	rep, err := h.Audit(AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkAudit(t, rep,
		want{VerdictRelanded, "Re-land TP8 (#6)", "introduced reverted re-added"},
		want{VerdictOK, "Add recipe (#1)", "introduced"},
		want{VerdictCorrected, "Bump image (#2)", "introduced pr-link-changed"},
		want{VerdictMismatch, "Retrigger (#7)", "introduced"},
		want{VerdictNoPR, "Update image directly", "introduced"},
		want{VerdictRetrigger, "Re-run the TP8 sweep (#9)", "introduced"},
	)
	if got := rep.Entries[5].Reason; !strings.Contains(got, "#3") {
		t.Errorf("retrigger reason %q should name the PR it re-runs", got)
	}
	if got := rep.Entries[3].Reason; !strings.Contains(got, "#3") || !strings.Contains(got, "#7") {
		t.Errorf("mismatch reason %q should name both PRs", got)
	}
	if ev := rep.Entries[2].Events[1]; ev.From != "XXX" || ev.To != pull(2) {
		t.Errorf("pr-link change %q -> %q", ev.From, ev.To)
	}
	// the audit at an older revision sees that revision's file
	old, err := h.Audit(AuditOptions{Rev: s.commits["Try TP8 (#3)"]})
	if err != nil {
		t.Fatal(err)
	}
	checkAudit(t, old,
		want{VerdictOK, "Add recipe (#1)", "introduced"},
		want{VerdictCorrected, "Bump image (#2)", "introduced pr-link-changed"},
		want{VerdictOK, "Try TP8 (#3)", "introduced"},
	)
	// --key filters by config-key glob
	if f, _ := h.Audit(AuditOptions{Key: "dsr1-*-sglang"}); len(f.Entries) != 6 {
		t.Errorf("key filter: %d entries", len(f.Entries))
	}
	if f, _ := h.Audit(AuditOptions{Key: "gptoss*"}); len(f.Entries) != 0 {
		t.Errorf("key filter gptoss*: %d entries", len(f.Entries))
	}
}

func TestAuditEditsAndIgnoreRevs(t *testing.T) {
	s := newScripted(t)
	e1 := entry("k1", "first", pull(1))
	e2 := entry("k2", "second", pull(2))
	s.commit("One (#1)", map[string]string{"perf-changelog.yaml": file(e1)})
	s.commit("Two (#2)", map[string]string{"perf-changelog.yaml": file(e1, e2)})
	// a cleanup PR rewrites the description of the first entry
	e1e := entry("k1", "first, reworded", pull(1))
	cleanup := s.commit("cleanup changelog (#9)", map[string]string{"perf-changelog.yaml": file(e1e, e2)})

	h := s.build(Options{Parts: PartChangelog})
	rep, _ := h.Audit(AuditOptions{})
	checkAudit(t, rep,
		want{VerdictEdited, "cleanup changelog (#9)", "introduced edited"},
		want{VerdictOK, "Two (#2)", "introduced"},
	)
	// looking through the cleanup: the entry is #1's
	h = s.build(Options{Parts: PartChangelog, IgnoreRevs: []plumbing.Hash{cleanup}})
	rep, _ = h.Audit(AuditOptions{})
	checkAudit(t, rep,
		want{VerdictOK, "One (#1)", "introduced edited"},
		want{VerdictOK, "Two (#2)", "introduced"},
	)
	if !rep.Entries[0].Events[1].Ignored {
		t.Error("the ignored commit's event should say so")
	}
}

func TestAuditUnloadableVersionsAndMerges(t *testing.T) {
	s := newScripted(t)
	e1 := entry("k1", "first", pull(1))
	s.commit("One (#1)", map[string]string{"perf-changelog.yaml": file(e1)})
	// #2 writes its entry indented: the file does not load
	e2 := entry("k2", "second", pull(2))
	bad := file(e1, "  "+strings.ReplaceAll(e2, "\n", "\n  "))
	s.commit("Two (#2)", map[string]string{"perf-changelog.yaml": bad})
	s.commit("Fix indentation (#3)", map[string]string{"perf-changelog.yaml": file(e1, e2)})
	// a side branch merged with a merge commit: first-parent history
	// attributes its entry to the merge
	base := s.head()
	e4 := entry("k4", "from a branch", pull(4))
	s.commit("side work", map[string]string{"perf-changelog.yaml": file(e1, e2, e4)})
	side := s.head()
	if err := s.w.Checkout(&git.CheckoutOptions{Hash: base, Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.r.Storer.SetReference(plumbing.NewHashReference(plumbing.Main, base)); err != nil {
		t.Fatal(err)
	}
	if err := s.w.Checkout(&git.CheckoutOptions{Branch: plumbing.Main, Force: true}); err != nil {
		t.Fatal(err)
	}
	s.commit("Merge pull request #4 from dev/side", map[string]string{"perf-changelog.yaml": file(e1, e2, e4)}, side)

	h := s.build(Options{Parts: PartChangelog})
	if len(h.Notes) != 1 || h.Notes[0].Commit != s.commits["Two (#2)"] {
		t.Fatalf("notes = %+v, want one for the unloadable version", h.Notes)
	}
	if _, ok := h.SeqOf(s.commits["side work"]); ok {
		t.Fatal("a side-branch commit is on the first-parent chain")
	}
	rep, _ := h.Audit(AuditOptions{})
	checkAudit(t, rep,
		want{VerdictOK, "One (#1)", "introduced"},
		want{VerdictOK, "Two (#2)", "introduced"},
		want{VerdictOK, "Merge pull request #4 from dev/side", "introduced"},
	)
	if n := rep.Entries[1].Events[0].Note; !strings.Contains(n, "did not load") {
		t.Errorf("note %q", n)
	}
}

func field(rep *BlameReport, path string) BlameField {
	for _, f := range rep.Fields {
		if f.Path == path {
			return f
		}
	}
	return BlameField{}
}

func TestBlameFollowsReorderMoveRenameRestructure(t *testing.T) {
	s := newScripted(t)
	old := strings.Replace(recipeA, "  scenarios:\n    fixed-seq-len:\n", "  seq-len-configs:\n", 1)
	old = strings.ReplaceAll(old, "\n    - isl", "\n  - isl")
	old = strings.ReplaceAll(old, "\n      osl", "\n    osl")
	old = strings.ReplaceAll(old, "\n      search-space", "\n    search-space")
	old = strings.ReplaceAll(old, "\n      - {", "\n    - {")
	s.commit("Add recipe (#1)", map[string]string{".github/configs/amd-master.yaml": old, ".github/configs/nvidia-master.yaml": "{}\n"})
	img := strings.Replace(old, "v0.5.9", "v0.5.10", 1)
	s.commit("Bump image (#2)", map[string]string{".github/configs/amd-master.yaml": img})
	// block style instead of flow style: no change
	reformatted := strings.Replace(img, "    - { tp: 4, conc-list: [4, 8, 16] }\n", "    - tp: 4\n      conc-list:\n      - 4\n      - 8\n      - 16\n", 1)
	s.commit("Reformat (#3)", map[string]string{".github/configs/amd-master.yaml": reformatted})
	// the configs move to configs/
	s.commit("Move configs (#4)", map[string]string{".github/configs/amd-master.yaml": "", ".github/configs/nvidia-master.yaml": "",
		"configs/amd-master.yaml": reformatted, "configs/nvidia-master.yaml": "{}\n"})
	// seq-len-configs becomes scenarios.fixed-seq-len (a restructure)
	cur := strings.Replace(recipeA, "v0.5.9", "v0.5.10", 1)
	s.commit("Scenarios (#5)", map[string]string{"configs/amd-master.yaml": cur})
	// a new first search-space item shifts the others
	cur2 := strings.Replace(cur, "      search-space:\n", "      search-space:\n      - { tp: 2, conc-list: [1] }\n", 1)
	s.commit("Add TP2 (#6)", map[string]string{"configs/amd-master.yaml": cur2})
	// the key is renamed, its recipe near-identical
	renamed := strings.Replace(cur2, "dsr1-fp8-mi355x-sglang:", "dsr1-fp8-mi355x-sglang-hicache:", 1)
	renamed = strings.Replace(renamed, "conc-end: 64", "conc-end: 128", 1)
	s.commit("Rename (#7)", map[string]string{"configs/amd-master.yaml": renamed})

	for _, keys := range [][]string{nil, {"dsr1-fp8-mi355x-sglang-hicache"}} {
		h := s.build(Options{Parts: PartRecipes, Keys: keys})
		rep, err := h.Blame("dsr1-fp8-mi355x-sglang-hicache", plumbing.ZeroHash)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string]string{
			"model":                          "Add recipe (#1)",
			"image":                          "Bump image (#2)",
			"scenarios.fixed-seq-len[0].isl": "Add recipe (#1)",
			"scenarios.fixed-seq-len[0].search-space[0].tp":        "Add TP2 (#6)",
			"scenarios.fixed-seq-len[0].search-space[1].conc-list": "Add recipe (#1)",
			"scenarios.fixed-seq-len[0].search-space[2].conc-end":  "Rename (#7)",
			"scenarios.fixed-seq-len[0].search-space[2].tp":        "Add recipe (#1)",
		}
		for p, subj := range cases {
			if f := field(rep, p); f.Subject != subj {
				t.Errorf("keys %v: %s since %q (%s), want %q", keys, p, f.Subject, f.Event, subj)
			}
		}
		if len(rep.Renames) != 1 || rep.Renames[0].From != "dsr1-fp8-mi355x-sglang" {
			t.Errorf("renames = %+v", rep.Renames)
		}
		if f := field(rep, "model"); f.Key != "dsr1-fp8-mi355x-sglang" || f.Event != EvCreated {
			t.Errorf("model: key %q event %s, want the old key, created", f.Key, f.Event)
		}
		if f := field(rep, "scenarios.fixed-seq-len[0].search-space[1].conc-list"); f.Value != "[4, 8, 16]" || f.Line != 15 {
			t.Errorf("conc-list value %q line %d", f.Value, f.Line)
		}
	}
	h := s.build(Options{Parts: PartRecipes})
	var uk *UnknownKeyError
	if _, err := h.Blame("dsr1-fp8-mi355x-sglang-hicach", plumbing.ZeroHash); !errors.As(err, &uk) || !errors.Is(err, ErrUnknownKey) ||
		len(uk.Closest) == 0 || uk.Closest[0] != "dsr1-fp8-mi355x-sglang-hicache" {
		t.Errorf("unknown key: %v", err)
	}
	// at the revision before the rename the old key exists
	rep, err := h.Blame("dsr1-fp8-mi355x-sglang", s.commits["Add TP2 (#6)"])
	if err != nil || field(rep, "image").Subject != "Bump image (#2)" || rep.File != "configs/amd-master.yaml" {
		t.Errorf("blame at #6: %+v, %v", field(rep, "image"), err)
	}
}

func TestBlameIgnoreRevs(t *testing.T) {
	s := newScripted(t)
	s.commit("Add (#1)", map[string]string{"configs/amd-master.yaml": recipeA})
	mech := s.commit("Rewrite registry (#2)", map[string]string{"configs/amd-master.yaml": strings.Replace(recipeA, "lmsysorg/", "docker.io/lmsysorg/", 1)})
	h := s.build(Options{Parts: PartRecipes})
	rep, _ := h.Blame("dsr1-fp8-mi355x-sglang", plumbing.ZeroHash)
	if f := field(rep, "image"); f.Subject != "Rewrite registry (#2)" {
		t.Errorf("image since %q", f.Subject)
	}
	h = s.build(Options{Parts: PartRecipes, IgnoreRevs: []plumbing.Hash{mech}})
	rep, _ = h.Blame("dsr1-fp8-mi355x-sglang", plumbing.ZeroHash)
	if f := field(rep, "image"); f.Subject != "Add (#1)" {
		t.Errorf("image since %q with #2 ignored", f.Subject)
	}
}

// TestUnknownKeySaysWhatEndedIt: blame of a key that is not at the
// revision names the commit that deleted or renamed it, or says that no
// recipe existed there yet; a misspelt key gets the nearest keys.
func TestUnknownKeySaysWhatEndedIt(t *testing.T) {
	s := newScripted(t)
	before := s.commit("Scripts only (#1)", map[string]string{"benchmarks/a.sh": "echo\n"})
	other := strings.Replace(recipeA, "dsr1-fp8-mi355x-sglang:", "dsr1-fp4-mi355x-sglang:", 1)
	s.commit("Add (#2)", map[string]string{"configs/amd-master.yaml": recipeA + other})
	renamed := strings.Replace(recipeA, "dsr1-fp8-mi355x-sglang:", "dsr1-fp8-mi355x-sglang-mtp:", 1)
	s.commit("Rename (#3)", map[string]string{"configs/amd-master.yaml": renamed + other})
	s.commit("Drop fp4 (#4)", map[string]string{"configs/amd-master.yaml": renamed})
	h := s.build(Options{Parts: PartRecipes})
	var uk *UnknownKeyError
	_, err := h.Blame("dsr1-fp4-mi355x-sglang", plumbing.ZeroHash)
	if !errors.As(err, &uk) || !errors.Is(err, ErrUnknownKey) || uk.Gone == nil || uk.Gone.Kind != EvDeleted ||
		uk.Gone.Subject != "Drop fp4 (#4)" || uk.Gone.PR == nil || *uk.Gone.PR != 4 {
		t.Fatalf("deleted key: %v (%+v)", err, uk)
	}
	if msg := err.Error(); !strings.Contains(msg, "does not exist at "+h.Head.String()[:10]) ||
		!strings.Contains(msg, "(#4, ") || !strings.Contains(msg, "deleted it (its last version: --rev "+uk.Gone.Commit[:10]+"~1)") {
		t.Errorf("message: %s", msg)
	}
	if _, err := h.Blame("dsr1-fp8-mi355x-sglang", plumbing.ZeroHash); !errors.As(err, &uk) || uk.Gone == nil ||
		uk.Gone.Kind != EvRenamed || uk.Gone.To != "dsr1-fp8-mi355x-sglang-mtp" || uk.Gone.Subject != "Rename (#3)" ||
		!strings.Contains(err.Error(), "renamed it to dsr1-fp8-mi355x-sglang-mtp") {
		t.Errorf("renamed key: %v", err)
	}
	// before the deletion the key is there
	if _, err := h.Blame("dsr1-fp4-mi355x-sglang", s.commits["Rename (#3)"]); err != nil {
		t.Errorf("blame before the deletion: %v", err)
	}
	if _, err := h.Blame("dsr1-fp4-mi355x-sglan", plumbing.ZeroHash); !errors.As(err, &uk) || uk.Gone != nil || uk.NoRecipes ||
		len(uk.Closest) == 0 || uk.Closest[0] != "dsr1-fp8-mi355x-sglang-mtp" {
		t.Errorf("misspelt key: %v", err)
	}
	if _, err := h.Blame("dsr1-fp8-mi355x-sglang-mtp", before); !errors.As(err, &uk) || !uk.NoRecipes ||
		!strings.HasSuffix(err.Error(), "no master config holds a recipe there") {
		t.Errorf("before any recipe: %v", err)
	}
}

func TestLogAndDiff(t *testing.T) {
	s := newScripted(t)
	e1 := entry("dsr1-fp8-mi355x-sglang", "Add", pull(1))
	s.commit("Add (#1)", map[string]string{"configs/amd-master.yaml": recipeA, "perf-changelog.yaml": file(e1)})
	a := s.commit("Bump image, no entry (#2)", map[string]string{"configs/amd-master.yaml": strings.Replace(recipeA, "v0.5.9", "v0.5.10", 1)})
	e3 := entry("dsr1-*-sglang", "Rerun", pull(3))
	s.commit("Rerun (#3)", map[string]string{"perf-changelog.yaml": file(e1, e3)})
	e4 := entry("dsr1-fp8-mi355x-sglang", "conc 4-128", pull(4))
	cur := strings.Replace(strings.Replace(recipeA, "v0.5.9", "v0.5.10", 1), "conc-end: 64", "conc-end: 128", 1)
	s.commit("More conc (#4)", map[string]string{"configs/amd-master.yaml": cur, "perf-changelog.yaml": file(e1, e3, e4)})

	h := s.build(Options{Parts: PartsAll})
	items, err := h.Log("dsr1-fp8-mi355x-sglang", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%s %s %d %d %v", it.Subject, it.Kind, len(it.Changes), len(it.Entries), it.MissingEntry))
	}
	wantLog := []string{
		"More conc (#4) changed 1 1 false",
		"Rerun (#3) changelog 0 1 false",
		"Bump image, no entry (#2) changed 1 0 true",
		"Add (#1) created 1 1 false",
	}
	if strings.Join(got, "\n") != strings.Join(wantLog, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLog, "\n"))
	}
	if c := items[0].Changes[0]; c.Path != "scenarios.fixed-seq-len[0].search-space[1].conc-end" || c.Old != "64" || c.New != "128" {
		t.Errorf("change %+v", c)
	}
	items, _ = h.Log("dsr1-fp8-mi355x-sglang", LogOptions{Path: "image"})
	if len(items) != 2 || items[0].Subject != "Bump image, no entry (#2)" || items[1].Kind != EvCreated ||
		len(items[1].Changes) != 1 || items[1].Changes[0].Path != "image" || items[1].Changes[0].New != "lmsysorg/sglang:v0.5.9-rocm700-mi35x" {
		t.Errorf("--path image: %+v", items)
	}
	if items, _ := h.Log("dsr1-fp8-mi355x-sglang", LogOptions{Path: "scenarios.*.conc-end"}); len(items) != 2 || items[0].Changes[0].Old != "64" {
		t.Errorf("--path glob: %+v", items)
	}
	d, err := h.KeyDiff("dsr1-fp8-mi355x-sglang", a, plumbing.ZeroHash, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != 2 || d.Items[0].Subject != "Rerun (#3)" || len(d.Net) != 1 || d.Net[0].New != "128" {
		t.Errorf("diff: %+v", d)
	}
	if _, err := h.Log("nope", LogOptions{}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("log of an unknown key: %v", err)
	}
	// a misspelt key that only a glob names (entry #3: dsr1-*-sglang) is
	// unknown too, with the key it was meant to be
	var uk *UnknownKeyError
	if _, err := h.Log("dsr1-fp8-mi355-sglang", LogOptions{}); !errors.As(err, &uk) || len(uk.Closest) == 0 || uk.Closest[0] != "dsr1-fp8-mi355x-sglang" {
		t.Errorf("log of a misspelt key a glob matches: %v", err)
	}
	if _, err := h.KeyDiff("dsr1-fp8-mi355-sglang", a, plumbing.ZeroHash, nil); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("diff of a misspelt key a glob matches: %v", err)
	}
}

// TestReleaseThenAskAgain: after Release, a key's events and blame are
// made again and equal the first ones (the index releases every batch of
// keys it has written, and the History is used after).
func TestReleaseThenAskAgain(t *testing.T) {
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartRecipes})
	if err != nil {
		t.Fatal(err)
	}
	keys := h.RecipeKeysAt(len(h.Chain) - 1)
	if len(keys) < 10 {
		t.Fatalf("%d keys at head", len(keys))
	}
	keys = keys[:10]
	type answer struct{ events, blame string }
	ask := func() []answer {
		var out []answer
		for _, k := range keys {
			b, err := h.Blame(k, head)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, answer{jsonOf(h.Keys[k].Events()), jsonOf(b)})
		}
		return out
	}
	first := ask()
	h.Release(keys...)
	for _, k := range keys {
		if kh := h.Keys[k]; kh.done || kh.evs != nil {
			t.Fatalf("%s: events kept after Release", k)
		}
	}
	again := ask()
	for i, k := range keys {
		if first[i] != again[i] {
			t.Errorf("%s: answers differ after Release", k)
		}
	}
}

// TestAuditRelandWithNewText: an entry whose text changed when it came
// back after a revert links the PR that added the entry before: relanded
// when that entry named the same config-keys (in any order), a mismatch
// when it named others.
func TestAuditRelandWithNewText(t *testing.T) {
	for _, tc := range []struct {
		first   string // the config-keys of #10's entry
		verdict Verdict
	}{
		{"k2,k1", VerdictRelanded},
		{"k1,k2,k3", VerdictMismatch},
		{"k1", VerdictMismatch},
	} {
		s := newScripted(t)
		base := entry("k0", "Add k0", pull(1))
		s.commit("Add k0 (#1)", map[string]string{"perf-changelog.yaml": file(base)})
		s.commit("Try TP8 (#10)", map[string]string{"perf-changelog.yaml": file(base, entry(tc.first, "Try TP8", pull(10)))})
		s.commit(`Revert "Try TP8 (#10)" (#11)`, map[string]string{"perf-changelog.yaml": file(base)})
		s.commit("Re-land TP8 (#12)", map[string]string{"perf-changelog.yaml": file(base, entry("k1,k2", "Try TP8 again, with the fix", pull(10)))})
		rep, err := s.build(Options{Parts: PartChangelog}).Audit(AuditOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkAudit(t, rep, want{VerdictOK, "Add k0 (#1)", "introduced"}, want{tc.verdict, "Re-land TP8 (#12)", "introduced"})
		why := rep.Entries[1].Reason
		if tc.verdict == VerdictRelanded && !strings.Contains(why, "re-lands the entry #10 added (removed by #11") {
			t.Errorf("%s: reason %q", tc.first, why)
		}
	}
}

// TestEntriesAtHeadAsReplayed: the entries at Head that buildLineages
// leaves are those a replay of every version gives, also when the head
// version has an entry that does not load (the entries are then those of
// the last version whose entries all load).
func TestEntriesAtHeadAsReplayed(t *testing.T) {
	e1, e2 := entry("k1", "first", pull(1)), entry("k2", "second", pull(2))
	broken := "- config-keys:\n    - k3\n  description:\n    - \"a\"\n  description:\n    - \"b\"\n  pr-link: " + pull(3) + "\n"
	for _, tc := range []struct {
		name  string
		files []string
		want  int // entries at head
	}{
		{"plain", []string{file(e1), file(e1, e2)}, 2},
		{"a failing entry at head", []string{file(e1), file(e1, e2), file(e1, e2, broken)}, 2},
		{"fixed again", []string{file(e1), file(e1, broken), file(e1, e2)}, 2},
	} {
		s := newScripted(t)
		for i, f := range tc.files {
			s.commit(fmt.Sprintf("c%d (#%d)", i, i+1), map[string]string{"perf-changelog.yaml": f})
		}
		h := s.build(Options{Parts: PartChangelog})
		head := len(h.Chain) - 1
		cached := h.EntriesAt(head)
		h.clHead.ok = false
		replayed := h.EntriesAt(head)
		if len(cached) != tc.want || len(replayed) != tc.want {
			t.Errorf("%s: %d entries cached, %d replayed, want %d", tc.name, len(cached), len(replayed), tc.want)
			continue
		}
		for i := range cached {
			if a, b := cached[i], replayed[i]; a.b != b.b || a.Lin != b.Lin || a.Index != b.Index || a.Line != b.Line {
				t.Errorf("%s: entry %d differs: %+v, replayed %+v", tc.name, i+1, a, b)
			}
		}
	}
}

// TestEventsAboveAsTheirSuffix: for every key of the real history, at
// forks around its versions, EventsAbove lists what Events lists above
// the fork (events and notes), and materialises nothing.
func TestEventsAboveAsTheirSuffix(t *testing.T) {
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartRecipes})
	if err != nil {
		t.Fatal(err)
	}
	// a plain run replays every 3rd key, the long run all of them (the
	// one key with versions that do not load among them; the scripted
	// TestEventsAboveSeedsPastWhatDoesNotLoad has such keys in any run)
	every, least, notes := 3, 350, 0
	if testcorpus.Long() {
		every, least, notes = 1, 1000, 1
	}
	checked, withNotes, renamed := checkEventsAbove(t, h, every)
	// the history has keys with versions that do not load, and keys
	// renamed or deleted: the cases the replay's seed must get right
	if checked < least || withNotes < notes || renamed < 10/every {
		t.Fatalf("checked %d forks; %d keys with notes, %d renamed or deleted", checked, withNotes, renamed)
	}
	t.Logf("checked %d forks; %d keys with notes, %d renamed or deleted", checked, withNotes, renamed)
}

// TestEventsAboveSeedsPastWhatDoesNotLoad: above a version that does not
// load, the next one is diffed against the last one that did; above a
// deletion, the next version creates the key again.
func TestEventsAboveSeedsPastWhatDoesNotLoad(t *testing.T) {
	s := newScripted(t)
	cfg := func(image string) map[string]string {
		text := strings.Replace(recipeA, "v0.5.9", image, 1)
		if strings.HasPrefix(image, "{") { // a flow mapping never closed: the recipe does not load
			text = strings.Replace(recipeA, "lmsysorg/sglang:v0.5.9-rocm700-mi35x", image, 1)
		}
		return map[string]string{"configs/amd-master.yaml": text, "configs/nvidia-master.yaml": "{}\n"}
	}
	s.commit("Add (#1)", cfg("v0.5.9"))
	s.commit("Bump (#2)", cfg("v0.5.10"))
	s.commit("Break (#3)", cfg("{v0.5.11"))
	s.commit("Mend (#4)", cfg("v0.5.12"))
	s.commit("Break again (#5)", cfg("{v0.5.13"))
	s.commit("Delete (#6)", map[string]string{"configs/amd-master.yaml": "{}\n"})
	s.commit("Again (#7)", cfg("v0.5.14"))
	s.commit("Bump (#8)", cfg("v0.5.15"))
	h := s.build(Options{Parts: PartRecipes})
	checked, withNotes, renamed := checkEventsAbove(t, h, 1)
	if checked < 8 || withNotes != 1 || renamed != 1 {
		t.Fatalf("checked %d forks; %d keys with notes, %d renamed or deleted", checked, withNotes, renamed)
	}
}

// checkEventsAbove compares EventsAbove with Events for every key of h at
// every fork, and counts the forks, the keys with notes and the keys
// renamed or deleted.
func checkEventsAbove(t *testing.T, h *History, every int) (checked, withNotes, renamed int) {
	t.Helper()
	type above struct {
		fork          int
		events, notes string
	}
	for i, k := range slices.Sorted(maps.Keys(h.Keys)) {
		if i%every != 0 {
			continue
		}
		kh := h.Keys[k]
		if !slices.IsSortedFunc(kh.raw, func(a, b rawEvent) int { return a.seq - b.seq }) {
			t.Fatalf("%s: versions out of order", k)
		}
		forks := map[int]bool{-1: true, len(h.Chain) - 1: true}
		for i, r := range kh.raw {
			if len(kh.raw) < 12 || i < 2 || i == len(kh.raw)/2 || i >= len(kh.raw)-2 {
				forks[r.seq-1], forks[r.seq] = true, true
			}
		}
		var got []above
		for _, f := range slices.Sorted(maps.Keys(forks)) {
			evs, notes := kh.EventsAbove(f)
			got = append(got, above{f, jsonOf(evs), jsonOf(notes)})
		}
		if kh.done || kh.evs != nil {
			t.Fatalf("%s: EventsAbove materialised the events", k)
		}
		all := kh.Events()
		for _, g := range got {
			var evs []*RecipeEvent
			var notes []Note
			for _, e := range all {
				if e.Seq > g.fork {
					evs = append(evs, e)
				}
			}
			for _, n := range kh.note {
				if n.Seq > g.fork {
					notes = append(notes, n)
				}
			}
			if want := jsonOf(evs); g.events != want {
				t.Errorf("%s above %d: events\n%s\nwant\n%s", k, g.fork, g.events, want)
			}
			if want := jsonOf(notes); g.notes != want {
				t.Errorf("%s above %d: notes\n%s\nwant\n%s", k, g.fork, g.notes, want)
			}
			// once materialised, the same answer from the events kept
			if evs2, notes2 := kh.EventsAbove(g.fork); jsonOf(evs2) != g.events || jsonOf(notes2) != g.notes {
				t.Errorf("%s above %d: materialised answer differs", k, g.fork)
			}
			checked++
		}
		if len(kh.note) > 0 {
			withNotes++
		}
		for _, e := range all {
			if e.Kind == EvRenamed || e.Kind == EvDeleted {
				renamed++
				break
			}
		}
	}
	return checked, withNotes, renamed
}

// TestBlameAboveAsBlame: on the real history, the blame of a recipe at
// head made from its blame at an earlier commit and its events since
// (BlameAbove) is Blame's, notes and renames included, wherever it
// answers; it answers for most recipes changed since a recent commit.
func TestBlameAboveAsBlame(t *testing.T) {
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartRecipes})
	if err != nil {
		t.Fatal(err)
	}
	last := len(h.Chain) - 1
	answered, declined := 0, 0
	for _, back := range []int{1, 2, 5, 20, 60, 200} {
		fork := last - back
		for _, k := range h.KeysChangedAfter(fork) {
			want, err := h.Blame(k, head)
			if err != nil {
				continue // not at head
			}
			prev, err := h.Blame(k, h.Chain[fork])
			if err != nil {
				continue // not at the fork
			}
			got, ok, err := h.BlameAbove(k, prev, fork)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				declined++
				continue
			}
			answered++
			if g, w := jsonOf([]any{got, got.Notes}), jsonOf([]any{want, want.Notes}); g != w {
				t.Fatalf("%s from %d commits back:\n%s\nwant\n%s", k, back, g, w)
			}
		}
	}
	t.Logf("answered %d, declined %d", answered, declined)
	if answered < 50 || answered < 3*declined {
		t.Fatalf("answered %d, declined %d", answered, declined)
	}
}

// TestBlameAboveFollowsMovesAndRenames: BlameAbove answers as Blame where
// a new commit swaps list items (a field's attribution is the one it had
// at its old place) and where the fields the new commits leave alone were
// all set after an old rename (Blame's walk stops before the rename, and
// does not list it).
func TestBlameAboveFollowsMovesAndRenames(t *testing.T) {
	s := newScripted(t)
	recipe := func(key, image, model, runner string, items ...string) map[string]string {
		text := fmt.Sprintf("%s:\n  image: %s\n  model: %s\n  runner: %s\n  search-space:\n", key, image, model, runner)
		for _, it := range items {
			text += "  - " + it + "\n"
		}
		return map[string]string{"configs/amd-master.yaml": text, "configs/nvidia-master.yaml": "{}\n"}
	}
	tp4, tp6, tp8, tp8b := "{ tp: 4, conc-list: [1, 2] }", "{ tp: 6, conc-list: [3, 5] }", "{ tp: 8, conc-list: [4, 8] }", "{ tp: 8, conc-list: [4, 8, 16] }"
	s.commit("Add (#1)", recipe("a", "img:v1", "m1", "r1", tp4))
	s.commit("Rename (#2)", recipe("b", "img:v1", "m1", "r1", tp4))
	s.commit("TP8 (#3)", recipe("b", "img:v1", "m2", "r2", tp4, tp8))
	s.commit("Everything but the image (#4)", recipe("b", "img:v1", "m3", "r3", tp6, tp8))
	s.commit("Swap (#5)", recipe("b", "img:v1", "m3", "r3", tp8b, tp6))
	s.commit("Image (#6)", recipe("b", "img:v2", "m3", "r3", tp8b, tp6))
	h := s.build(Options{Parts: PartRecipes})
	last := len(h.Chain) - 1
	if n := len(h.Keys["b"].Events()); n < 5 {
		t.Fatalf("%d events of b", n)
	}
	renamesKept := map[int]int{} // renames of prev's not in the head's
	for fork := 1; fork < last; fork++ {
		want, err := h.Blame("b", h.Head)
		if err != nil {
			t.Fatal(err)
		}
		prev, err := h.Blame("b", h.Chain[fork])
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := h.BlameAbove("b", prev, fork)
		if err != nil || !ok {
			t.Fatalf("above %d: %v %v", fork, ok, err)
		}
		if g, w := jsonOf([]any{got, got.Notes}), jsonOf([]any{want, want.Notes}); g != w {
			t.Fatalf("above %d:\n%s\nwant\n%s", fork, g, w)
		}
		renamesKept[fork] = len(prev.Renames) - len(got.Renames)
	}
	// from the rename on, prev lists it (the image was set before it)
	// and the head's blame does not: the image changed since, and
	// everything else after the rename
	if renamesKept[1] != 1 || renamesKept[2] != 1 || renamesKept[3] != 1 || renamesKept[4] != 1 {
		t.Fatalf("renames dropped from prev's, by fork: %v", renamesKept)
	}
}

// A key that is not at Head cannot be followed from the files holding it
// there: a build for it reads every recipe's history, so that its log,
// blame and diff answer as a build without Options.Keys (and as the
// index) does. They used to answer from Head alone: no recipe history at
// all, and a diff across its deletion that found no change.
func TestKeyNotAtHeadAnswersAsEveryRecipe(t *testing.T) {
	s := newScripted(t)
	other := "\nother-key:\n  image: x\n"
	s.commit("Add recipe (#1)", map[string]string{"configs/amd-master.yaml": recipeA + other, "configs/nvidia-master.yaml": "{}\n",
		"perf-changelog.yaml": entry("dsr1-fp8-mi355x-sglang", "Add it", "https://github.com/o/r/pull/1")})
	s.commit("Bump image (#2)", map[string]string{"configs/amd-master.yaml": strings.Replace(recipeA, "v0.5.9", "v0.5.10", 1) + other})
	s.commit("Remove it (#3)", map[string]string{"configs/amd-master.yaml": strings.TrimPrefix(other, "\n")})
	key := "dsr1-fp8-mi355x-sglang"
	render := func(h *History) string {
		t.Helper()
		l, err := h.Log(key, LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := h.Log(key, LogOptions{After: s.commits["Add recipe (#1)"]})
		if err != nil {
			t.Fatal(err)
		}
		_, berr := h.Blame(key, plumbing.ZeroHash)
		j, _ := json.Marshal([]any{l, d, berr.Error()})
		return string(j)
	}
	for _, o := range []Options{{Parts: PartsAll}, {Parts: PartRecipes}} {
		want := render(s.build(o))
		if !strings.Contains(want, `"deleted"`) || !strings.Contains(want, "v0.5.10") {
			t.Fatalf("the full history lacks the key's life: %s", want)
		}
		o.Keys = []string{key}
		if got := render(s.build(o)); got != want {
			t.Errorf("changelog %v: a build for the key alone answers\n%s\nnot\n%s", o.Parts.Has(PartChangelog), got, want)
		}
	}
	// a key that never existed: the same error, with the nearest keys
	_, err := s.build(Options{Parts: PartRecipes, Keys: []string{"other-ke"}}).Blame("other-ke", plumbing.ZeroHash)
	var uk *UnknownKeyError
	if !errors.As(err, &uk) || uk.Gone != nil || len(uk.Closest) == 0 || uk.Closest[0] != "other-key" {
		t.Errorf("a key that never existed: %v", err)
	}
}

// TestBlameRowsContinueByParallelism: when a PR rewrites a search-space
// list, a row continues the old row of the same parallelism (tp, ep,
// dp-attn, spec-decoding), not the row at the same position: a new row
// reports its fields since the PR that wrote it, never since one that set
// them on a deleted row of other parallelism.
func TestBlameRowsContinueByParallelism(t *testing.T) {
	s := newScripted(t)
	rows := func(r string) string {
		return strings.Replace(recipeA, "      - { tp: 4, conc-list: [4, 8, 16] }\n      - { tp: 8, conc-start: 4, conc-end: 64 }\n", r, 1)
	}
	s.commit("Add recipe (#1)", map[string]string{"configs/amd-master.yaml": rows(
		"      - { tp: 2, ep: 2, conc-start: 4, conc-end: 64 }\n      - { tp: 8, conc-start: 4, conc-end: 64 }\n"), "configs/nvidia-master.yaml": "{}\n"})
	// the tp2/ep2 row is replaced by a tp4/ep1 row with the same conc-start
	s.commit("Rewrite the rows (#2)", map[string]string{"configs/amd-master.yaml": rows(
		"      - { tp: 8, conc-start: 4, conc-end: 128 }\n      - { tp: 4, ep: 1, conc-start: 4, conc-end: 64 }\n")})
	h := s.build(Options{Parts: PartRecipes})
	rep, err := h.Blame("dsr1-fp8-mi355x-sglang", plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	for p, subj := range map[string]string{
		"scenarios.fixed-seq-len[0].search-space[1].conc-start": "Rewrite the rows (#2)", // a new row (tp 4), not the tp2/ep2 one
		"scenarios.fixed-seq-len[0].search-space[1].tp":         "Rewrite the rows (#2)",
		"scenarios.fixed-seq-len[0].search-space[0].conc-start": "Add recipe (#1)", // the tp8 row, moved up
		"scenarios.fixed-seq-len[0].search-space[0].conc-end":   "Rewrite the rows (#2)",
	} {
		if f := field(rep, p); f.Subject != subj {
			t.Errorf("%s since %q, want %q", p, f.Subject, subj)
		}
	}
}
