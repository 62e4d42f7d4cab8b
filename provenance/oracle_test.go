package provenance

import (
	"bufio"
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/perflog/perflog/internal/testcorpus"
)

// readTSV reads a tab-separated file of testdata/oracle, without its
// comment lines and header.
func readTSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open("../testdata/oracle/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	header := true
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		if header {
			header = false
			continue
		}
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	return rows
}

// TestBisectOracle: perflog's launch blame against bisect questions
// answered from git alone (testdata/oracle, built without perflog's
// code): which commit gave a recipe's server this flag, variable or
// image. An answer names that PR, or a stretch where the launch was not
// known that holds it; it never names another PR. The commits that
// touched a recipe's files without changing what its server gets are no
// launch change in its log. Long: it walks 38 recipes' whole histories
// (PERFLOG_LONG_TESTS).
func TestBisectOracle(t *testing.T) {
	if os.Getenv("PERFLOG_LONG_TESTS") == "" {
		t.Skip("long: set PERFLOG_LONG_TESTS=1")
	}
	qs, negs := readTSV(t, "bisect-questions.tsv"), readTSV(t, "bisect-negatives.tsv")
	var keys []string
	for _, rows := range [][][]string{qs, negs} {
		for _, r := range rows {
			if !slices.Contains(keys, r[0]) {
				keys = append(keys, r[0])
			}
		}
	}
	r, head := testcorpus.Open(t, nil)
	ctx := context.Background()
	h, err := Build(ctx, r, Options{Head: head, Parts: PartsAll, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	seqOfPR := map[int]int{}
	for s := range h.Chain {
		if ref, err := h.Ref(s); err == nil && ref.PR != nil {
			if _, dup := seqOfPR[*ref.PR]; !dup {
				seqOfPR[*ref.PR] = s
			}
		}
	}
	seqOf := func(c CommitRef) int { s, _ := h.SeqOf(plumbing.NewHash(c.Commit)); return s }
	blames, logs := map[string][]BlameField{}, map[string][]LogItem{}
	for _, k := range keys {
		vs, err := h.Launches(ctx, k, head, LaunchOptions{Repo: r})
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if blames[k], err = h.BlameLaunch(k, head, vs); err != nil {
			t.Fatal(err)
		}
		if logs[k], err = h.Log(k, LogOptions{Launches: vs}); err != nil {
			t.Fatal(err)
		}
	}
	count := map[string]int{}
	for _, q := range qs {
		key, kind, field, value := q[0], q[1], q[2], q[3]
		pr, _ := strconv.Atoi(q[4])
		// a variable a launcher or helper exports is the runner's
		// (launch.runner-env), and the oracle wrote its value as the
		// script's text: an expansion in it stands for what it gives
		fields, same := []string{field}, func(v string) bool { return v == value }
		if kind == "launcher-env" || kind == "helper-env" {
			fields = append(fields, "launch.runner-env."+strings.TrimPrefix(field, "launch.env."))
			same = scriptValue(value).MatchString
		}
		var rows []BlameField
		for _, f := range blames[key] {
			for _, fd := range fields {
				if (f.Path == fd || strings.HasPrefix(f.Path, fd+"[")) && same(f.Value) {
					rows = append(rows, f)
				}
			}
		}
		verdict := "missing"
		for _, f := range rows {
			switch {
			case f.SetIn == nil && f.PR != nil && *f.PR == pr:
				verdict = "agree"
			case f.SetIn != nil && seqOf(f.SetIn.From) <= seqOfPR[pr] && seqOfPR[pr] <= seqOf(f.SetIn.To):
				if verdict != "agree" {
					verdict = "in a stretch not known"
				}
			case verdict == "missing":
				verdict = "wrong"
			}
		}
		count[verdict]++
		if verdict == "wrong" || verdict == "missing" {
			var got []string
			for _, f := range rows {
				got = append(got, f.Path+" "+f.Subject)
			}
			t.Errorf("%s %s = %s: git says #%d; perflog: %s %v", key, field, value, pr, verdict, got)
		}
	}
	listed := 0
	for _, n := range negs {
		key := n[0]
		pr, _ := strconv.Atoi(n[1])
		for _, it := range logs[key] {
			if it.PR == nil || *it.PR != pr {
				continue
			}
			for _, c := range it.Changes {
				if strings.HasPrefix(c.Path, "launch.") && !strings.HasPrefix(c.Path, "launch.client.") {
					listed++
					t.Errorf("%s: #%d changed nothing its server gets, yet the log lists %s %s -> %s", key, pr, c.Path, c.Old, c.New)
					break
				}
			}
		}
	}
	t.Logf("%d questions: %v; %d negatives, %d listed as a launch change", len(qs), count, len(negs), listed)
	if count["agree"] < 77 {
		t.Errorf("%d answers agree with git, fewer than the 77 of 2026-12-08", count["agree"])
	}
}

// scriptValue matches what a script's text (`/tmp/cache-$JOB_ID`,
// `$((40000 + (JOB_ID % 10000)))`) gives: each expansion stands for any
// text, an unknown value included.
func scriptValue(text string) *regexp.Regexp {
	expansion := regexp.MustCompile(`\$\(\(.*\)\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range expansion.FindAllStringIndex(text, -1) {
		b.WriteString(regexp.QuoteMeta(text[last:m[0]]) + ".*")
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(text[last:]) + "$")
	return regexp.MustCompile(b.String())
}

func TestScriptValue(t *testing.T) {
	for _, c := range []struct {
		text, value string
		want        bool
	}{
		{"/tmp/cache-$JOB_ID", "/tmp/cache-<unknown:grep>", true},
		{"/tmp/cache-$JOB_ID", "/var/cache-1", false},
		{"$((40000 + (JOB_ID % 10000)))", "<unknown:arithmetic>", true},
		{"/tmp/enroot-runtime-${UID}", "/tmp/enroot-runtime-0", true},
		{"$HOME/.cache/huggingface", "/home/runner/.cache/huggingface", true},
		{"$HOME/.cache/huggingface", "/home/runner/.cache/hf", false},
		{"/scratch/models/Q.FP8", "/scratch/models/QxFP8", false},
	} {
		if got := scriptValue(c.text).MatchString(c.value); got != c.want {
			t.Errorf("%q against %q: %v, want %v", c.text, c.value, got, c.want)
		}
	}
}
