package changelog

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestMergeParity: on each case of testdata/merge (the incumbent's own
// test cases, and more), Merge with the PR's number produces the bytes
// the incumbent's resolve-conflict produced, or refuses where it refused
// (recorded by testdata/merge/record.py).
func TestMergeParity(t *testing.T) {
	files, _ := filepath.Glob("testdata/merge/*.txtar")
	if len(files) < 15 {
		t.Fatalf("%d cases", len(files))
	}
	for _, p := range files {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string][]byte{}
			for _, f := range a.Files {
				sec[f.Name] = f.Data
			}
			m := regexp.MustCompile(`(?m)^pr: (\d+)$`).FindSubmatch(a.Comment)
			if m == nil {
				t.Fatal("no pr: line")
			}
			pr, _ := strconv.Atoi(string(m[1]))
			res, err := Merge(sec["base"], sec["main"], sec["pr"], MergeOptions{Repository: "SemiAnalysisAI/InferenceX", PR: pr})
			want, refused := sec["want"], sec["refused"]
			switch {
			case refused != nil:
				var c *MergeConflict
				if !errors.As(err, &c) {
					t.Fatalf("the incumbent refused (%s), perflog merged (%v):\n%s", bytes.TrimSpace(refused), err, resBytes(res))
				}
			case err != nil:
				t.Fatalf("the incumbent merged, perflog: %v", err)
			case !bytes.Equal(res.Bytes, want):
				t.Fatalf("bytes differ\nperflog:\n%q\nincumbent:\n%q", res.Bytes, want)
			}
		})
	}
}

func resBytes(r *MergeResult) []byte {
	if r == nil {
		return nil
	}
	return r.Bytes
}

func mergeBlock(key, link string) string {
	return "- config-keys:\n    - " + key + "\n  description:\n    - \"Update " + key + "\"\n  pr-link: " + link + "\n"
}

// TestMergeAsDriver: without a PR number (git's merge driver), both
// sides' new entries survive in order, an entry both added is kept once,
// a correction beside an append is applied, and what needs a person is a
// *MergeConflict: a history edit, a deleted entry, YAML that does not
// parse.
func TestMergeAsDriver(t *testing.T) {
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	base := mergeBlock("a", L+"1")
	for _, c := range []struct {
		name                   string
		base, upstream, contri string
		want                   string // "" with conflict
		conflict               string
		dropped                []int // the common ancestor's entries upstream deleted or rewrote
	}{
		{name: "both appended", base: base,
			upstream: base + "\n" + mergeBlock("up", L+"2"), contri: base + "\n" + mergeBlock("pr", L+"3"),
			want: base + "\n" + mergeBlock("up", L+"2") + "\n" + mergeBlock("pr", L+"3")},
		{name: "the same entry on both sides", base: base,
			upstream: base + "\n" + mergeBlock("same", L+"2"), contri: base + "\n" + mergeBlock("same", L+"2") + "\n" + mergeBlock("pr", "XXX"),
			want: base + "\n" + mergeBlock("same", L+"2") + "\n" + mergeBlock("pr", "XXX")},
		{name: "a correction against an append", base: mergeBlock("a", "XXX"),
			upstream: mergeBlock("a", "XXX") + "\n" + mergeBlock("up", L+"2"), contri: mergeBlock("a", L+"1") + "\n" + mergeBlock("pr", L+"3"),
			want: mergeBlock("a", L+"1") + "\n" + mergeBlock("up", L+"2") + "\n" + mergeBlock("pr", L+"3")},
		{name: "upstream's history is upstream's", base: base,
			upstream: strings.Replace(base, "Update a", "Update a, fixed", 1) + "\n" + mergeBlock("up", L+"2"), contri: base + "\n" + mergeBlock("pr", L+"3"),
			want: strings.Replace(base, "Update a", "Update a, fixed", 1) + "\n" + mergeBlock("up", L+"2") + "\n" + mergeBlock("pr", L+"3"), dropped: []int{1}},
		{name: "upstream deleted an entry", base: base + "\n" + mergeBlock("b", L+"4"),
			upstream: base, contri: base + "\n" + mergeBlock("b", L+"4") + "\n" + mergeBlock("pr", L+"3"),
			want: base + "\n" + mergeBlock("pr", L+"3"), dropped: []int{2}},
		{name: "upstream deleted an entry and appended one", base: base + "\n" + mergeBlock("b", L+"4"),
			upstream: base + "\n" + mergeBlock("up", L+"2"), contri: base + "\n" + mergeBlock("b", L+"4") + "\n" + mergeBlock("pr", L+"3"),
			want: base + "\n" + mergeBlock("up", L+"2") + "\n" + mergeBlock("pr", L+"3"), dropped: []int{2}},
		{name: "a correction of an entry upstream deleted", base: base + "\n" + mergeBlock("b", "XXX"),
			upstream: base, contri: base + "\n" + mergeBlock("b", L+"4"),
			conflict: "the upstream side no longer has entry 2 (b), whose pr-link the contributing side corrected"},
		{name: "a history edit on the contributing side", base: base,
			upstream: base + "\n" + mergeBlock("up", L+"2"), contri: strings.Replace(base, "Update a", "Update a, fixed", 1) + "\n" + mergeBlock("pr", L+"3"),
			conflict: "deleted or rewrote entry 1 (a, line 1"},
		{name: "two history edits on the contributing side", base: base + "\n" + mergeBlock("b", L+"4"),
			upstream: base + "\n" + mergeBlock("b", L+"4"), contri: strings.Replace(base, "Update a", "Update a, fixed", 1) + "\n" + strings.Replace(mergeBlock("b", L+"4"), "Update b", "Update b, fixed", 1),
			conflict: "deleted or rewrote 2 entries, which the changelog's history keeps as they were: entry 1 (a, line 1 of the common ancestor); entry 2 (b, line 7"},
		{name: "a deleted entry", base: base + "\n" + mergeBlock("b", L+"4"),
			upstream: base + "\n" + mergeBlock("b", L+"4") + "\n" + mergeBlock("up", L+"2"), contri: base + "\n" + mergeBlock("pr", L+"3"),
			conflict: "deleted or rewrote entry 2 (b, line 7"},
		{name: "YAML that does not parse", base: base, upstream: base + "\n" + mergeBlock("up", L+"2"), contri: base + "\n- config-keys: [\n",
			conflict: "does not parse"},
		{name: "CRLF", base: strings.ReplaceAll(base, "\n", "\r\n"),
			upstream: strings.ReplaceAll(base+"\n"+mergeBlock("up", L+"2"), "\n", "\r\n"), contri: strings.ReplaceAll(base+"\n"+mergeBlock("pr", L+"3"), "\n", "\r\n"),
			want: strings.ReplaceAll(base+"\n"+mergeBlock("up", L+"2")+"\n"+mergeBlock("pr", L+"3"), "\n", "\r\n")},
		{name: "no final newline at base", base: strings.TrimSuffix(base, "\n"),
			upstream: base + "\n" + mergeBlock("up", L+"2"), contri: strings.TrimSuffix(base, "\n"),
			want: base + "\n" + mergeBlock("up", L+"2")},
		{name: "no final newline upstream", base: base,
			upstream: base + "\n" + strings.TrimSuffix(mergeBlock("up", L+"2"), "\n"), contri: base + "\n" + strings.TrimSuffix(mergeBlock("pr", L+"3"), "\n"),
			want: base + "\n" + mergeBlock("up", L+"2") + "\n" + mergeBlock("pr", L+"3")},
		{name: "a new file on both sides", base: "",
			upstream: mergeBlock("up", L+"2"), contri: mergeBlock("pr", L+"3"),
			want: mergeBlock("up", L+"2") + "\n" + mergeBlock("pr", L+"3")},
	} {
		res, err := Merge([]byte(c.base), []byte(c.upstream), []byte(c.contri), MergeOptions{Repository: "SemiAnalysisAI/InferenceX"})
		if c.conflict != "" {
			var mc *MergeConflict
			if !errors.As(err, &mc) || !strings.Contains(err.Error(), c.conflict) {
				t.Errorf("%s: want a conflict (%s), got %v\n%s", c.name, c.conflict, err, resBytes(res))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(res.Bytes) != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, res.Bytes, c.want)
		}
		if !slices.Equal(res.UpstreamDropped, c.dropped) {
			t.Errorf("%s: upstream deleted or rewrote %v, want %v", c.name, res.UpstreamDropped, c.dropped)
		}
	}
}

// FuzzMerge: whatever the three sides, a merge either is a conflict or
// keeps every entry of both sides: upstream's bytes first, unchanged
// (but for the pr-links it corrected), then every new entry of the
// contributing side that upstream lacks. It never panics.
func FuzzMerge(f *testing.F) {
	files, _ := filepath.Glob("testdata/merge/*.txtar")
	for _, p := range files {
		a, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		sec := map[string][]byte{}
		for _, fl := range a.Files {
			sec[fl.Name] = fl.Data
		}
		f.Add(sec["base"], sec["main"], sec["pr"])
	}
	f.Fuzz(func(t *testing.T, base, upstream, contrib []byte) {
		res, err := Merge(base, upstream, contrib, MergeOptions{Repository: "o/r"})
		if err != nil {
			var c *MergeConflict
			if !errors.As(err, &c) {
				t.Fatalf("not a conflict: %v", err)
			}
			return
		}
		if len(res.Corrected) == 0 && !bytes.HasPrefix(res.Bytes, upstream) && !blank(upstream) {
			// upstream without a final newline gets one
			if !bytes.HasPrefix(res.Bytes, append(append([]byte(nil), upstream...), '\n')) &&
				!bytes.HasPrefix(res.Bytes, append(append([]byte(nil), upstream...), '\r', '\n')) {
				t.Fatalf("upstream's bytes are not the result's start")
			}
		}
		m, _, err := parseWithRoot("m", res.Bytes)
		if err != nil {
			t.Fatalf("the result does not parse: %v", err)
		}
		u, _ := Parse("u", upstream)
		c, _ := Parse("c", contrib)
		b, _ := Parse("b", base)
		have := map[string]bool{}
		for _, e := range m.Entries {
			have[e.Identity()] = true
		}
		for _, e := range u.Entries {
			if !have[e.Identity()] {
				t.Fatalf("upstream entry %d lost", e.Index)
			}
		}
		for _, e := range c.Entries[len(b.Entries):] {
			if !have[e.Identity()] {
				t.Fatalf("contributed entry %d lost", e.Index)
			}
		}
	})
}

// TestMergeWithPRSaysWhatTheBytesBreak: under the incumbent's contract
// (a PR number), a side whose bytes it refuses as a whole is refused
// with the incumbent's reason, not a later rule's.
func TestMergeWithPRSaysWhatTheBytesBreak(t *testing.T) {
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	base := mergeBlock("a", L+"1")
	up, pr := base+"\n"+mergeBlock("up", L+"2"), base+"\n"+mergeBlock("pr", "XXX")
	for _, c := range []struct{ name, base, upstream, contri, want string }{
		{"CRLF base", strings.ReplaceAll(base, "\n", "\r\n"), up, pr, "the base side contains CR characters"},
		{"no final newline at base", strings.TrimSuffix(base, "\n"), up, pr, "the base side does not end with a newline"},
		{"a tab upstream", base, up + "\t\n", pr, "the upstream side contains tabs"},
		{"a NUL on the PR's side", base, up, pr + "\x00\n", "the contributing side contains NUL bytes"},
	} {
		_, err := Merge([]byte(c.base), []byte(c.upstream), []byte(c.contri), MergeOptions{Repository: "SemiAnalysisAI/InferenceX", PR: 42})
		var mc *MergeConflict
		if !errors.As(err, &mc) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// without a PR number (git's driver), a CRLF file merges as CRLF
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	if res, err := Merge([]byte(crlf(base)), []byte(crlf(up)), []byte(crlf(pr)), MergeOptions{Repository: "SemiAnalysisAI/InferenceX"}); err != nil || !strings.HasSuffix(string(res.Bytes), "\r\n") {
		t.Errorf("CRLF as a driver: %v", err)
	}
}
