package provenance

import (
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/pyyaml"
)

const chunkRecipe = `dsr1-fp8-mi355x-sglang:
  image: lmsysorg/sglang:v0.5.2-rocm700-mi35x
  model: deepseek-ai/DeepSeek-R1-0528
  # a comment between keys

  runner: mi355x
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
      - tp: 4
        ep: 4
        conc-list: [4, 8, 16]
    - isl: 8192
      osl: 1024
      search-space:
        - { tp: 8, conc-list: [1, 2] }
  extra:
    env: "A=1 B=2"
    flags: >-
      --one
      --two
`

// checkMemo re-reads every memoised subtree of ch from its key's text
// alone: a key whose text is not the text of the lines it stands for
// would map to another value.
func checkMemo(t *testing.T, ch *chunks, every int) {
	t.Helper()
	n := 0
	for k, v := range ch.nodes {
		if v == nil {
			continue
		}
		if n++; n%every != 0 {
			continue
		}
		lines := strings.SplitAfter(k.text, "\n")
		if m := len(lines); lines[m-1] == "" {
			lines = lines[:m-1]
		}
		again, ok := newChunks().cut(k.text, lines, k.ind, 0)
		if !ok || pyyaml.Canonical(again) != pyyaml.Canonical(v) {
			t.Fatalf("memo entry at indent %d holds %s; its text reads as %s (ok=%v):\n%s",
				k.ind, pyyaml.Render(v), pyyaml.Render(again), ok, k.text)
		}
	}
	if n == 0 {
		t.Fatal("nothing memoised")
	}
}

func TestChunkMemo(t *testing.T) {
	ch := newChunks()
	_, v, ok := ch.parseRecipe(chunkRecipe)
	if !ok {
		t.Fatal("the recipe was not parsed piecewise")
	}
	full, err := pyyaml.Load([]byte(chunkRecipe), pyyaml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pyyaml.Canonical(v) != pyyaml.Canonical(full.Pairs[0].Value) {
		t.Fatalf("piecewise %s, whole %s", pyyaml.Render(v), pyyaml.Render(full.Pairs[0].Value))
	}
	checkMemo(t, ch, 1)

	// an edit shares every subtree it does not touch with the version
	// before it, and leaves the values of both versions as parsed
	edited := strings.Replace(chunkRecipe, "conc-list: [4, 8, 16]", "conc-list: [4, 8, 32]", 1)
	_, w, ok := ch.parseRecipe(edited)
	if !ok {
		t.Fatal("the edited recipe was not parsed piecewise")
	}
	get := func(v *pyyaml.Value, path ...any) *pyyaml.Value {
		for _, p := range path {
			switch p := p.(type) {
			case string:
				v, _ = v.Get(p)
			case int:
				v = v.Items[p]
			}
		}
		return v
	}
	same := [][]any{{"extra"}, {"scenarios", "fixed-seq-len", 1}, {"scenarios", "fixed-seq-len", 0, "search-space", 0}}
	for _, p := range same {
		if get(v, p...) != get(w, p...) {
			t.Errorf("%v: an untouched subtree was parsed again", p)
		}
	}
	changed := []any{"scenarios", "fixed-seq-len", 0, "search-space", 1}
	if get(v, changed...) == get(w, changed...) {
		t.Fatal("the edited subtree is shared with the old version")
	}
	if got := pyyaml.Render(get(w, append(changed, "conc-list")...)); got != "[4, 8, 32]" {
		t.Errorf("edited conc-list = %s", got)
	}
	if got := pyyaml.Render(get(v, append(changed, "conc-list")...)); got != "[4, 8, 16]" {
		t.Errorf("old conc-list = %s", got)
	}
	checkMemo(t, ch, 1)
}

// TestHasNodeSyntax: anchors, aliases, tags and directives send a recipe
// to a whole parse; the same characters in comments do not.
func TestHasNodeSyntax(t *testing.T) {
	cases := map[string]bool{
		"k:\n  a: 1\n":                                 false,
		"k:\n  # 1*DEP8 + 1*DEP8\n  a: 1\n":            false,
		"k:\n  a: 1 # TP & EP\n":                       false,
		"#!shebang-like & comment\nk:\n  a: 1\n":       false,
		"k:\n  base: &b {tp: 8}\n  other: *b\n":        true,
		"k:\n  a: !!str 5\n":                           true,
		"%YAML 1.1\nk:\n  a: 1\n":                      true,
		"k:\n  a: x#y & z\n":                           true, // no blank before '#': not a comment
		"k:\n  a: \"x # y\" & z\n":                     true, // a quote first: the rest of the line counts
		"k:\n  a: 'it''s # not' *b\n":                  true,
		"k:\n  url: http://h/x?a=1&b=2 # see & here\n": true,
	}
	for text, want := range cases {
		if got := hasNodeSyntax(text); got != want {
			t.Errorf("hasNodeSyntax(%q) = %v, want %v", text, got, want)
		}
	}
	// an anchor used across pieces: the recipe is parsed whole, as one
	ch := newChunks()
	if _, _, ok := ch.parseRecipe("k:\n  base: &b {tp: 8}\n  other: *b\n"); ok {
		t.Error("a recipe with an anchor and an alias was parsed piecewise")
	}
}

// TestPlaceRecipe: a placed parse puts every node on the line a whole
// parse does, through every way the cutter reads a piece: one-line values
// read alone or together (quoted ones), values over several lines, nested
// and compact blocks, block mappings as list items, comments and blanks
// between them.
func TestPlaceRecipe(t *testing.T) {
	texts := []string{chunkRecipe, `k:
  image: "img:1"
  # a comment

  model: 'm'
  runner: "r" # trailing
  list:
  - "a"
  - 'b'

  - { tp: 8, ep: "4" }
  - tp: 4
    name: "x"
    conc-list: [1,
      2, 4]
  flow: [a,
    b]
  text: >-
    one
    two
  deep:
    deeper:
      - "q"
      - r: 's'
        t: "u"
`, `k:
  a: 1 # one
  b: x # two
  c: "y" # three
  s:
  - 1 # four
  - z # five
  - [a,
    b]
  - "w" # six
  m: é
`}
	for _, text := range texts {
		whole, err := pyyaml.Load([]byte(text), pyyaml.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, v, ok := newChunks().placeRecipe(text)
		if !ok {
			t.Fatalf("not read piecewise:\n%s", text)
		}
		if pyyaml.Canonical(v) != pyyaml.Canonical(whole.Pairs[0].Value) {
			t.Fatalf("placed parse reads %s", pyyaml.Render(v))
		}
		if where := otherLines(v, whole.Pairs[0].Value, ""); where != "" {
			t.Fatalf("placed parse puts %s:\n%s", where, text)
		}
	}
}

// deepRecipe is a recipe whose extra field nests levels deep.
func deepRecipe(levels int) string {
	var b strings.Builder
	b.WriteString("deep-fp8-mi355x-sglang:\n  image: x\n  extra:\n")
	for i := 2; i < levels; i++ {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	b.WriteString(strings.Repeat(" ", levels) + "a: 1\n")
	return b.String()
}

// Deep nesting is left to the parser (each level the chunker cuts scans
// the lines below it again): the value is the parser's.
func TestChunkDeepNesting(t *testing.T) {
	text := deepRecipe(400)
	ch := newChunks()
	_, v, ok := ch.parseRecipe(text)
	full, err := pyyaml.Load([]byte(text), pyyaml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ok && pyyaml.Canonical(v) != pyyaml.Canonical(full.Pairs[0].Value) {
		t.Fatal("the deep recipe reads differently piecewise")
	}
}

// BenchmarkChunkDeepNesting: 3000 levels of nesting (a hostile config)
// took an index build 10 s before nesting past maxChunkIndent was left to
// the parser.
func BenchmarkChunkDeepNesting(b *testing.B) {
	text := deepRecipe(3000)
	for b.Loop() {
		newChunks().parseRecipe(text)
	}
}
