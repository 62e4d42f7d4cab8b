package changelog

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestAppendEntries(t *testing.T) {
	const hist = "- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n"
	const mine = "- config-keys:\n    - b\n  description:\n    - \"old draft\"\n  pr-link: https://github.com/o/r/pull/2\n"
	draft := []DraftEntry{{ConfigKeys: []string{"b"}, Description: []string{"new"}, PRLink: "https://github.com/o/r/pull/2"}}
	want := hist + "\n" + RenderEntry(draft[0])
	for _, tc := range []struct {
		name, cur, base, want string
		replaced              int
	}{
		{"append", hist, hist, want, 0},
		{"no final newline", strings.TrimSuffix(hist, "\n"), hist, want, 0},
		{"trailing blank line kept as the separator", hist + "\n", hist, want, 0},
		{"own entry replaced", hist + "\n" + mine, hist, want, 1},
		{"own entry replaced, trailing debris with it", hist + "\n" + mine + "\n\n", hist, want, 1},
		{"a historical entry with the same key is kept", hist + "\n" + mine, hist + "\n" + mine, hist + "\n" + mine + "\n" + RenderEntry(draft[0]), 0},
		{"empty file", "", "", RenderEntry(draft[0]), 0},
		{"comments before the first entry stay", "# log\n" + mine, "# log\n", "# log\n\n" + RenderEntry(draft[0]), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, res, err := AppendEntries("c.yaml", []byte(tc.cur), draft, AppendOptions{Base: []byte(tc.base), HaveBase: true, PRLink: draft[0].PRLink})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			if len(res.Replaced) != tc.replaced {
				t.Errorf("replaced %v, want %d", res.Replaced, tc.replaced)
			}
			if f, _, err := parseWithRoot("c.yaml", got); err != nil || len(f.Entries) == 0 {
				t.Errorf("result does not parse: %v", err)
			}
		})
	}
	if _, _, err := AppendEntries("c.yaml", []byte("- [unclosed\n"), draft, AppendOptions{}); err == nil {
		t.Error("a changelog that does not parse must not be appended to")
	}
}

// The data loss of issue 26: a base whose changelog is missing or does not
// load must not make every entry "this change's own".
func TestAppendNeverRemovesWithoutBase(t *testing.T) {
	const hist = "- config-keys:\n    - b\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n"
	draft := []DraftEntry{{ConfigKeys: []string{"b"}, Description: []string{"new"}, PRLink: "https://github.com/o/r/pull/2"}}
	cur := hist + "\n" + strings.ReplaceAll(hist, "pull/1", "pull/2")
	for _, opt := range []AppendOptions{
		{HaveBase: false, PRLink: draft[0].PRLink},                                    // no file at base
		{Base: []byte("foo: [\n"), HaveBase: true, PRLink: draft[0].PRLink},           // does not load
		{Base: []byte("- config-keys: [\n"), HaveBase: true, PRLink: draft[0].PRLink}, // likewise
	} {
		got, res, err := AppendEntries("c.yaml", []byte(cur), draft, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(got, []byte(cur)) {
			t.Errorf("base %q: history changed:\n%s", opt.Base, got)
		}
		if len(res.Replaced) != 0 || res.NoBase == "" {
			t.Errorf("base %q: replaced %v, NoBase %q", opt.Base, res.Replaced, res.NoBase)
		}
	}
}

// Only the trailing run of this change's own entries is replaced: an own
// entry followed by another one is kept.
func TestAppendReplacesOnlyTheOwnTail(t *testing.T) {
	e := func(key, pr string) string {
		return "- config-keys:\n    - " + key + "\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/" + pr + "\n"
	}
	base := e("a", "1")
	cur := base + "\n" + e("b", "2") + "\n" + e("c", "3") + "\n" + e("b", "2")
	draft := []DraftEntry{{ConfigKeys: []string{"b"}, Description: []string{"new"}, PRLink: "https://github.com/o/r/pull/2"}}
	got, res, err := AppendEntries("c.yaml", []byte(cur), draft, AppendOptions{Base: []byte(base), HaveBase: true, PRLink: draft[0].PRLink})
	if err != nil {
		t.Fatal(err)
	}
	keep := base + "\n" + e("b", "2") + "\n" + e("c", "3")
	if want := keep + "\n" + RenderEntry(draft[0]); string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(res.Replaced) != 1 || res.Replaced[0] != 4 || len(res.Kept) != 1 || res.Kept[0] != 2 {
		t.Errorf("replaced %v kept %v", res.Replaced, res.Kept)
	}
}

// A root that is not a list at column 0 cannot take an appended entry.
func TestAppendRefusesNonListRoots(t *testing.T) {
	draft := []DraftEntry{{ConfigKeys: []string{"b"}, Description: []string{"new"}, PRLink: "https://github.com/o/r/pull/2"}}
	for _, cur := range []string{
		"foo: bar\n", "0\n", "just a string\n",
		"  - config-keys:\n      - a\n    description:\n      - x\n    pr-link: https://github.com/o/r/pull/1\n",
		"- [unclosed\n",
	} {
		_, _, err := AppendEntries("c.yaml", []byte(cur), draft, AppendOptions{HaveBase: true})
		if !errors.Is(err, ErrNotAppendable) {
			t.Errorf("%q: err %v, want ErrNotAppendable", cur, err)
		}
	}
}

// FuzzAppendEntries: whatever the file, the base and the draft, the bytes
// before the appended region are the file's, no entry the base has is
// removed, and the result parses as a list (or AppendEntries refuses).
func FuzzAppendEntries(f *testing.F) {
	const hist = "- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n"
	f.Add(hist, hist, "b", 2, true)
	f.Add(hist+"\n"+strings.ReplaceAll(hist, "- a", "- b"), hist, "b", 1, true)
	f.Add(hist, "", "a", 1, false)
	f.Add("# c\n\n"+hist+"\n\n", "bad: [", "a", 1, true)
	f.Add("foo: bar", "", "a", 3, true)
	f.Fuzz(func(t *testing.T, cur, base, key string, pr int, haveBase bool) {
		if len(cur) > 1<<16 || len(base) > 1<<16 {
			return
		}
		link := "https://github.com/o/r/pull/" + strings.Repeat("1", 1+(pr%3+3)%3)
		draft := []DraftEntry{{ConfigKeys: []string{key}, Description: []string{"d"}, PRLink: link}}
		out, res, err := AppendEntries("c.yaml", []byte(cur), draft, AppendOptions{Base: []byte(base), HaveBase: haveBase, PRLink: link})
		if err != nil {
			return // refused: the file stays as it is
		}
		hf, _ := Parse("c.yaml", []byte(cur))
		if len(res.Replaced) == 0 && !bytes.HasPrefix(out, []byte(cur)) {
			t.Fatalf("nothing replaced but the file's bytes changed:\n%q\n%q", cur, out)
		}
		if len(res.Replaced) > 0 {
			if !haveBase {
				t.Fatal("replaced without a base")
			}
			first := hf.Entries[res.Replaced[0]-1]
			if !bytes.HasPrefix(out, []byte(cur[:first.Start])) {
				t.Fatal("bytes before the replaced entries changed")
			}
			bf, _, err := parseWithRoot("c.yaml", []byte(base))
			if err != nil {
				t.Fatal("replaced with a base that does not parse")
			}
			ids := map[string]bool{}
			for _, e := range bf.Entries {
				ids[e.Identity()] = true
			}
			for _, i := range res.Replaced {
				if ids[hf.Entries[i-1].Identity()] {
					t.Fatalf("entry %d is the base's and was replaced", i)
				}
			}
		}
		of, root, err := parseWithRoot("c.yaml", out)
		if err != nil || root == nil || len(of.Entries) != len(hf.Entries)-len(res.Replaced)+1 {
			t.Fatalf("result does not parse as the entries: %v\n%q", err, out)
		}
	})
}

// TestRenderEntryQuotesWhatIsNotPrintable: a bullet or key holding a
// terminal escape (ESC, CSI as U+009B), DEL, a line separator or a BOM is
// written escaped: the entry loads back (PyYAML refuses those characters
// raw) with the same strings, and its text holds none of them.
func TestRenderEntryQuotesWhatIsNotPrintable(t *testing.T) {
	odd := "a\x1b[31mb\u009bc\x7fd\u2028e\ufefff\u0085g"
	e := DraftEntry{ConfigKeys: []string{"k-" + odd}, Description: []string{"bullet " + odd}, PRLink: "https://github.com/o/r/pull/1"}
	text := RenderEntry(e)
	if strings.ContainsAny(text, "\x1b\u009b\x7f\u2028\ufeff\u0085") {
		t.Errorf("the rendered entry holds a raw control character: %q", text)
	}
	pe, err := ParseEntry([]byte(text))
	if err != nil {
		t.Fatalf("%q does not load: %v", text, err)
	}
	if k := pe.Strings(FieldConfigKeys); len(k) != 1 || k[0] != "k-"+odd {
		t.Errorf("config-keys %q", k)
	}
	if d := pe.Strings(FieldDescription); len(d) != 1 || d[0] != "bullet "+odd {
		t.Errorf("description %q", d)
	}
}
