package changelog

import (
	"os"
	"path/filepath"
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
			got, res, err := AppendEntries("c.yaml", []byte(tc.cur), []byte(tc.base), draft, draft[0].PRLink)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			if len(res.Replaced) != tc.replaced {
				t.Errorf("replaced %v, want %d", res.Replaced, tc.replaced)
			}
			if f, _, err := Parse("c.yaml", got); err != nil || len(f.Entries) == 0 {
				t.Errorf("result does not parse: %v", err)
			}
		})
	}
	if _, _, err := AppendEntries("c.yaml", []byte("- [unclosed\n"), nil, draft, ""); err == nil {
		t.Error("a changelog that does not parse must not be appended to")
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	data, _ := os.ReadFile(p)
	if string(data) != "new" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("content %q mode %v", data, fi.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}
