package load

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testcorpus"
)

// TestResolvePROrder: the flag, then the CI environment, then GitHub,
// then the subject of a one-commit range; GitHub is asked only when
// neither the flag nor the environment names the PR.
func TestResolvePROrder(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	c, err := r.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	parent := c.Parents[0]
	m := regexp.MustCompile(`\(#(\d+)\)\s*$`).FindStringSubmatch(c.Subject())
	if m == nil {
		t.Fatalf("the sample's head subject names no PR: %q", c.Subject())
	}
	subjectPR, _ := strconv.Atoi(m[1])
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	asked := 0
	lookup := func(n int, ok bool) func() (int, bool) {
		return func() (int, bool) { asked++; return n, ok }
	}
	cases := []struct {
		name     string
		o        PROptions
		onlyBase bool // base is not head's parent
		want     int
		src      string
		asks     int
	}{
		{"flag", PROptions{Flag: 5, FlagSet: true, Getenv: env("GITHUB_REF", "refs/pull/7/merge"), Lookup: lookup(9, true), Subject: true}, false, 5, "--pr", 0},
		{"flag 0 on main", PROptions{FlagSet: true, Lookup: lookup(9, true), Subject: true}, false, 0, "--pr", 0},
		{"environment", PROptions{Getenv: env("GITHUB_REF", "refs/pull/7/merge"), Lookup: lookup(9, true), Subject: true}, false, 7, "GITHUB_REF", 0},
		{"GitHub", PROptions{Getenv: env(), Lookup: lookup(9, true), Subject: true}, false, 9, "GitHub", 1},
		{"subject", PROptions{Lookup: lookup(0, false), Subject: true}, false, subjectPR, "the head commit's subject", 1},
		{"no subject asked", PROptions{Subject: false}, false, 0, "", 0},
		{"a longer range", PROptions{Subject: true}, true, 0, "", 0},
	}
	for _, tc := range cases {
		asked = 0
		base := parent
		if tc.onlyBase {
			pc, err := r.Commit(parent)
			if err != nil || len(pc.Parents) == 0 {
				t.Fatalf("the sample's head has no grandparent: %v", err)
			}
			base = pc.Parents[0]
		}
		got, src, err := ResolvePR(r, base, head, tc.o)
		if err != nil || got != tc.want || src != tc.src || asked != tc.asks {
			t.Errorf("%s: ResolvePR = %d, %q, %v (GitHub asked %d times); want %d, %q (asked %d)", tc.name, got, src, err, asked, tc.want, tc.src, tc.asks)
		}
	}
	// an event file that cannot be read is an error, not "no PR"
	if _, _, err := ResolvePR(r, parent, head, PROptions{Getenv: env("GITHUB_EVENT_PATH", t.TempDir()+"/missing.json")}); err == nil {
		t.Error("a missing GITHUB_EVENT_PATH: no error")
	}
}

// TestInputReadsBothSides: the input of base..head holds the changelog
// as git holds it at each side, names the files that differ, and the base
// configs verify loads are the ones the change's base revision reads.
func TestInputReadsBothSides(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	c, err := r.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	base := c.Parents[0]
	s := &config.Settings{}
	in, err := Input(r, s, base, head, "base", "head")
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		rev  string
		at   [20]byte
		have []byte
	}{{"base", base, in.Base}, {"head", head, in.Head}} {
		want, err := r.ReadFile(side.at, s.ChangelogPath())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(side.have, want) {
			t.Errorf("the changelog at %s: %d bytes, git has %d", side.rev, len(side.have), len(want))
		}
	}
	fcs, err := r.ChangedFiles(base, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, fc := range fcs {
		if !in.Change.Touched(fc.Path) {
			t.Errorf("%s differs between base and head; the change does not name it", fc.Path)
		}
	}
	bm, err := in.BaseMaster()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := in.Change.Base.Keys()
	if err != nil || len(keys) != len(bm.Keys) || len(keys) == 0 {
		t.Errorf("the base revision reads %d keys (%v), the base configs %d", len(keys), err, len(bm.Keys))
	}
	if in.BaseRev != "base" || in.HeadRev != "head" {
		t.Errorf("names %q, %q", in.BaseRev, in.HeadRev)
	}
}

// TestMissingBaseIsAnError: a change whose base cannot be read is an
// error naming the base, never a change that adds every recipe.
func TestMissingBaseIsAnError(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	missing := [20]byte{1}
	if _, err := Input(r, &config.Settings{}, missing, head, "nowhere", "head"); err == nil || !strings.Contains(err.Error(), "0100000000") {
		t.Errorf("Input from a base that does not exist: %v", err)
	}
	if _, err := WorktreeChange(r, &config.Settings{}, missing, head, "nowhere"); err == nil || !strings.Contains(err.Error(), "at nowhere") {
		t.Errorf("WorktreeChange from a base that does not exist: %v", err)
	}
}
