package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
)

// TestReportOfTheSample writes the report of the whole shipped history
// (without launch lanes: those are dry runs, checked in the browser test)
// and holds it to what the history commands answer on their own: a page
// per recipe at the head, the audit's verdicts, each recipe's log; every
// page ≤ 2 MB. Long: it reads the whole history (PERFLOG_LONG_TESTS).
func TestReportOfTheSample(t *testing.T) {
	if !testcorpus.Long() {
		t.Skipf("the whole history's report: set %s=1", testcorpus.LongEnv)
	}
	r, head := testcorpus.Open(t, nil)
	ctx := context.Background()
	src, err := index.OpenSource(r, index.SourceOptions{Rev: head.String(), NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	site, err := Build(ctx, src, &config.Settings{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := Write(site, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Largest > 2<<20 {
		t.Errorf("the largest page is %d bytes, over 2 MB", st.Largest)
	}

	h, err := provenance.Build(ctx, r, provenance.Options{Head: head, Parts: provenance.PartsAll})
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := h.SeqOf(head)
	keys := h.RecipeKeysAt(seq)
	if len(site.Recipes) != len(keys) || st.Pages != len(keys)+1 {
		t.Errorf("%d recipe pages (%d written) for %d recipes at the head", len(site.Recipes), st.Pages-1, len(keys))
	}
	rep, err := h.Audit(provenance.AuditOptions{Rev: head})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range provenance.Verdicts {
		if site.Audit.Summary[v] != rep.Summary[v] {
			t.Errorf("verdict %s: the report counts %d, the audit %d", v, site.Audit.Summary[v], rep.Summary[v])
		}
	}
	flagged := 0
	for _, e := range rep.Entries {
		if e.Verdict != provenance.VerdictOK && e.Verdict != provenance.VerdictCorrected {
			flagged++
		}
	}
	if got := len(overview(site).Flagged); got != flagged || flagged == 0 {
		t.Errorf("%d entries flagged, want the %d the audit does not judge ok or corrected", got, flagged)
	}

	// a recipe's page lists the commits its log lists, each once, and the
	// commits without an entry are counted after the changelog's creation
	created := h.ChangelogCreated()
	missing := map[string]bool{}
	for _, rc := range site.Recipes {
		items, err := h.Log(rc.Key, provenance.LogOptions{Rev: head})
		if err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rc.Page)))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(page), `<tr id="c-`); n != len(items) {
			t.Errorf("%s: %d rows, its log has %d commits", rc.Key, n, len(items))
		}
		for _, it := range items {
			sq, _ := h.SeqOf(plumbing.NewHash(it.Commit))
			if it.MissingEntry && sq >= created && !(it.Kind == provenance.EvChanged && len(it.Changes) == 0) {
				missing[it.Commit] = true
			}
		}
	}
	if len(site.Missing) != len(missing) {
		t.Errorf("%d commits without an entry in the overview, the logs have %d", len(site.Missing), len(missing))
	}
}
