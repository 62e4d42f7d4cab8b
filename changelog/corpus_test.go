package changelog

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe"
)

// The recorded verdicts in testdata/parity come from running the incumbent
// Python gate on the shipped corpus (see the headers of those files).

func openCorpus(t testing.TB) *gitscan.Repo {
	t.Helper()
	r, _ := testcorpus.Open(t, nil)
	// the corpus tests replay history: both sides of hundreds of commits
	r.SetReadCache(16 << 20)
	return r
}

type recorded struct {
	commit, category, msg string
	pr, verdict           int
}

// readLines returns the non-comment lines of a recorded-verdicts file.
func readLines(t testing.TB, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "#") && sc.Text() != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}

func readRecorded(t testing.TB, path string, strict bool) []recorded {
	var out []recorded
	for _, line := range readLines(t, path) {
		c := strings.Split(line, "\t")
		r := recorded{commit: c[0]}
		if strict {
			r.pr, _ = strconv.Atoi(c[1])
			r.verdict, _ = strconv.Atoi(c[2])
			r.msg = c[3]
		} else {
			r.verdict, _ = strconv.Atoi(c[1])
			r.category = c[2]
			r.msg = c[3]
		}
		out = append(out, r)
	}
	return out
}

func corpusInput(t testing.TB, r *gitscan.Repo, commit string) *Input {
	t.Helper()
	head, err := r.Resolve(commit)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	return inputAt(t, r, c.Parents[0], head, commit[:10]+"^", commit[:10])
}

// inputAt is the input of base..head as changelog/load reads it (which
// this package cannot import): both trees, the paths that differ.
func inputAt(t testing.TB, r *gitscan.Repo, base, head plumbing.Hash, baseName, headName string) *Input {
	t.Helper()
	s := &config.Settings{}
	fcs, err := r.ChangedFiles(base, head)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, fc := range fcs {
		paths = append(paths, fc.Path)
	}
	in, err := NewInput(s, recipe.NewChange(recipe.NewRev(baseName, r.Tree(base), s), recipe.NewRev(headName, r.Tree(head), s), paths))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestGateMatchesIncumbentOnHistory: every post-#1992 changelog commit of
// the real history gets the incumbent gate's verdict, except where the
// incumbent failed for reasons outside the changelog rules (today's recipe
// schema applied to old configs, the sweep generator, the replay lacking
// utils/), which perflog does not reproduce and must not invent.
func TestGateMatchesIncumbentOnHistory(t *testing.T) {
	t.Parallel()
	r := openCorpus(t)
	rows := readRecorded(t, "../testdata/parity/gate-history.tsv", false)
	if len(rows) < 200 {
		t.Fatalf("only %d recorded rows", len(rows))
	}
	agree, compared := 0, 0
	for i, row := range rows {
		if !testcorpus.Long() && i%8 != 0 {
			continue // a plain run checks every 8th; the long run all
		}
		rep := Verify(corpusInput(t, r, row.commit), ProfileGate)
		switch row.category {
		case "pass", "changelog":
			compared++
			if rep.OK() != (row.verdict == 0) {
				t.Errorf("%s: perflog ok=%v, incumbent exit %d (%s); findings %v", row.commit[:10], rep.OK(), row.verdict, row.msg, rep.Findings)
				continue
			}
			agree++
		default:
			if !rep.OK() {
				t.Errorf("%s: perflog fails (%v) where the incumbent failed only for %s", row.commit[:10], rep.Findings, row.category)
			}
		}
	}
	t.Logf("gate: %d/%d commits agree", agree, compared)
}

// TestStrictMatchesIncumbentOnHistory: all 831 changelog commits, with the
// PR number from the subject, get the incumbent strict contract's verdict.
// A plain run checks every 8th (PERFLOG_LONG_TESTS=1: all).
func TestStrictMatchesIncumbentOnHistory(t *testing.T) {
	t.Parallel()
	r := openCorpus(t)
	rows := readRecorded(t, "../testdata/parity/strict-history.tsv", true)
	if len(rows) != 831 {
		t.Fatalf("%d recorded rows, want 831", len(rows))
	}
	agree, n := 0, 0
	for i, row := range rows {
		if !testcorpus.Long() && i%8 != 0 {
			continue
		}
		n++
		in := corpusInput(t, r, row.commit)
		in.PR = row.pr
		rep := Verify(in, ProfileStrict)
		if rep.OK() != (row.verdict == 0) {
			t.Errorf("%s (PR %d): perflog ok=%v, incumbent verdict %d (%s); findings %v", row.commit[:10], row.pr, rep.OK(), row.verdict, row.msg, rep.Findings)
			continue
		}
		agree++
	}
	t.Logf("strict: %d/%d commits agree", agree, n)
}
