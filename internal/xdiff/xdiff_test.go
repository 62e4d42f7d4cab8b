package xdiff

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
)

var update = flag.Bool("update", false, "rewrite testdata/git-golden.txt with git's answers (needs git)")

func masks(r *Result) (del, add string) {
	return ranges(r.Old), ranges(r.New)
}

// ranges renders a change mask as "a-b,c" (1-based line numbers).
func ranges(m []bool) string {
	var parts []string
	for i := 0; i < len(m); i++ {
		if !m[i] {
			continue
		}
		j := i
		for j+1 < len(m) && m[j+1] {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(i+1))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", i+1, j+1))
		}
		i = j
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

var hunkRe = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// gitMasks runs `git diff --no-index` and reads which lines it deletes and adds.
func gitMasks(t *testing.T, a, b []byte) (string, string) {
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(pa, a, 0o644)
	os.WriteFile(pb, b, 0o644)
	cmd := exec.Command("git", "-c", "core.quotepath=off", "diff", "--no-index", "--no-color", pa, pb)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, _ := cmd.Output()
	del := make([]bool, len(SplitLines(a)))
	add := make([]bool, len(SplitLines(b)))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	oi, ni := 0, 0
	inHunk := false
	for sc.Scan() {
		l := sc.Text()
		if m := hunkRe.FindStringSubmatch(l); m != nil {
			oi, _ = strconv.Atoi(m[1])
			ni, _ = strconv.Atoi(m[3])
			if m[2] == "0" {
				oi++
			}
			if m[4] == "0" {
				ni++
			}
			oi--
			ni--
			inHunk = true
			continue
		}
		if !inHunk || l == "" {
			continue
		}
		switch l[0] {
		case '-':
			del[oi] = true
			oi++
		case '+':
			add[ni] = true
			ni++
		case ' ':
			oi++
			ni++
		}
	}
	return ranges(del), ranges(add)
}

// corpusPairs returns consecutive versions of the changelog and master
// configs along the shipped corpus's first-parent history.
func corpusPairs(t testing.TB) [][2]plumbing.Hash {
	r, head := testcorpus.Open(t, nil)
	var pairs [][2]plumbing.Hash
	paths := []string{"perf-changelog.yaml", "configs/nvidia-master.yaml", "configs/amd-master.yaml"}
	prev := map[string]plumbing.Hash{}
	err := r.FirstParent(context.Background(), gitscan.WalkOptions{From: head}, func(n gitscan.Node) error {
		for _, p := range paths {
			h, ok, err := r.FileHash(n.Hash, p)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if ph, seen := prev[p]; seen && ph != h {
				pairs = append(pairs, [2]plumbing.Hash{h, ph}) // old, new
			}
			prev[p] = h
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blobs = func(h plumbing.Hash) []byte {
		b, err := r.ReadBlob(h)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return pairs
}

var blobs func(plumbing.Hash) []byte

// TestMatchesGitOnCorpus checks every consecutive pair of versions of the
// changelog and master configs in the shipped corpus against git's own
// answers, recorded in testdata/git-golden.txt (regenerate with -update).
// A plain run checks every 4th pair; PERFLOG_LONG_TESTS=1 all of them.
func TestMatchesGitOnCorpus(t *testing.T) {
	pairs := corpusPairs(t)
	golden := "testdata/git-golden.txt"
	if *update {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git not found")
		}
		var buf bytes.Buffer
		for _, p := range pairs {
			d, a := gitMasks(t, blobs(p[0]), blobs(p[1]))
			fmt.Fprintf(&buf, "%s %s %s %s\n", p[0], p[1], d, a)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		want[f[0]+" "+f[1]] = [2]string{f[2], f[3]}
	}
	checked := 0
	for i, p := range pairs {
		if !testcorpus.Long() && i%4 != 0 {
			continue // a plain run checks every 4th pair, the long run all
		}
		w, ok := want[p[0].String()+" "+p[1].String()]
		if !ok {
			t.Fatalf("no golden answer for %s %s; run go test ./xdiff -update", p[0], p[1])
		}
		d, a := masks(Diff(blobs(p[0]), blobs(p[1])))
		if d != w[0] || a != w[1] {
			t.Errorf("%s → %s:\n  xdiff: -%s +%s\n  git:   -%s +%s", p[0], p[1], d, a, w[0], w[1])
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("only %d pairs checked", checked)
	}
	t.Logf("%d version pairs agree with git", checked)
}

func TestSlidingFollowsIndentHeuristic(t *testing.T) {
	// An entry inserted between two entries whose text it repeats: the
	// added block can slide; git (indent heuristic) keeps it starting at
	// "- config-keys:" after the blank line.
	old := "- config-keys:\n  - a\n  pr-link: x\n\n- config-keys:\n  - b\n  pr-link: x\n"
	new := "- config-keys:\n  - a\n  pr-link: x\n\n- config-keys:\n  - n\n  pr-link: x\n\n- config-keys:\n  - b\n  pr-link: x\n"
	r := Diff([]byte(old), []byte(new))
	var got []string
	for _, l := range r.Added() {
		got = append(got, string(l))
	}
	want := []string{"- config-keys:\n", "  - n\n", "  pr-link: x\n", "\n"}
	if strings.Join(got, "") != strings.Join(want, "") {
		t.Fatalf("added = %q, want %q", got, want)
	}
	if len(r.Deleted()) != 0 {
		t.Fatalf("deleted = %q", r.Deleted())
	}
}

func TestAgainstGitRandom(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	alphabet := []string{"- config-keys:\n", "  - a\n", "  - b\n", "\n", "  description:\n", "    - x\n", "  pr-link: 1\n", "  pr-link: 2\n", "}\n", "\tx\n"}
	seed := uint32(7)
	rnd := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	gen := func() []byte {
		var b bytes.Buffer
		for i := rnd(40); i > 0; i-- {
			b.WriteString(alphabet[rnd(len(alphabet))])
		}
		if rnd(5) == 0 {
			b.WriteString("tail")
		}
		return b.Bytes()
	}
	for i := 0; i < 150; i++ {
		a := gen()
		b := append([]byte(nil), a...)
		// mutate b: insertions, deletions, duplicates
		for k := rnd(4); k >= 0; k-- {
			ls := SplitLines(b)
			p := rnd(len(ls) + 1)
			var nb []byte
			for q, l := range ls {
				if q == p {
					nb = append(nb, gen()...)
				}
				if rnd(6) != 0 {
					nb = append(nb, l...)
				}
			}
			b = nb
		}
		wd, wa := gitMasks(t, a, b)
		gd, ga := masks(Diff(a, b))
		if wd != gd || wa != ga {
			t.Fatalf("case %d:\nold %q\nnew %q\n  xdiff -%s +%s\n  git   -%s +%s", i, a, b, gd, ga, wd, wa)
		}
	}
}
