package provenance

import (
	"strings"
	"sync"

	"github.com/perflog/perflog/internal/pyyaml"
)

// A recipe changes a few lines at a time, but a parser reads all of it:
// over the InferenceX history 1761 distinct recipe texts hold 3.6 MB. So
// recipes are parsed piecewise, the way blocks are cut from a file: a
// block-style mapping is cut at its keys, a block sequence at its "- "
// items, and each piece is parsed once per distinct text (chunks). Equal
// pieces then share one *pyyaml.Value, which also lets a structural diff
// skip them by identity. Anything the cutting does not understand (tabs,
// anchors, quoted or complex keys, flow collections over several lines,
// duplicate keys, a document marker) is parsed whole, and a test checks
// the assembled value against a whole parse for every recipe of the real
// history.
//
// Lines of values parsed piecewise count from their piece, not the file:
// history diffs do not show lines. Blame reads its lines from the recipe
// at the revision parsed with its pieces placed (placeRecipe: copies of
// the pieces with the lines a whole parse gives; block.full).

// chunks memoises parsed pieces by text; safe for concurrent use.
type chunks struct {
	mu    sync.Mutex
	m     map[string]*pyyaml.Value
	one   map[string]*pyyaml.Value // one-line values read by pyyaml.Inline
	nodes map[nodeKey]*pyyaml.Value
}

// nodeKey is a run of lines and the indent node reads them at.
type nodeKey struct {
	text string
	ind  int
}

func newChunks() *chunks {
	return &chunks{m: map[string]*pyyaml.Value{}, one: map[string]*pyyaml.Value{}, nodes: map[nodeKey]*pyyaml.Value{}}
}

// line constructs the value of one line's text after "key:" or "-" when
// pyyaml.Inline can (most recipe lines: a scalar or a flow list or
// mapping); the caller parses the rest. Inline earns its place: a cold
// `perflog index` takes 29 % less time with it (docs/dev/performance.md).
func (c *chunks) line(text string) (*pyyaml.Value, bool) {
	text = strings.TrimSuffix(text, "\n")
	if text != "" && text[0] != ' ' {
		return nil, false
	}
	c.mu.Lock()
	v, ok := c.one[text]
	c.mu.Unlock()
	if ok {
		return v, v != nil
	}
	v, _ = pyyaml.Inline(text)
	c.mu.Lock()
	c.one[text] = v
	c.mu.Unlock()
	return v, v != nil
}

// parse loads one piece: a "key: value" document or a one-item list.
func (c *chunks) parse(text string) (*pyyaml.Value, bool) {
	c.mu.Lock()
	v, ok := c.m[text]
	c.mu.Unlock()
	if ok {
		return v, v != nil
	}
	v, err := pyyaml.Load([]byte(text), pyyaml.Options{})
	if err != nil {
		v = nil
	}
	c.mu.Lock()
	c.m[text] = v
	c.mu.Unlock()
	return v, v != nil
}

// parseRecipe loads a recipe block "key:\n  ..." piecewise; ok is false
// when it must be parsed whole.
func (c *chunks) parseRecipe(text string) (key string, v *pyyaml.Value, ok bool) {
	return c.recipe(text, 0)
}

// placeRecipe is parseRecipe for a value whose nodes have the lines of a
// whole parse of text (their columns are not set): built from copies of
// the pieces, placed where each piece is, so that nothing it returns is
// shared with another parse. It is what a blame needs of the recipe at its
// head (block.full) at a fraction of a whole parse's cost.
func (c *chunks) placeRecipe(text string) (key string, v *pyyaml.Value, ok bool) {
	return c.recipe(text, 2) // the body begins on the block's second line
}

// recipe reads a recipe block; base, when not 0, is the line of the body
// in the block, and the value is placed (see placeRecipe).
func (c *chunks) recipe(text string, base int) (key string, v *pyyaml.Value, ok bool) {
	if strings.ContainsAny(text, "\t\r") || strings.Contains(text, "\n---") || hasNodeSyntax(text) {
		return "", nil, false
	}
	first, body, _ := strings.Cut(text, "\n")
	k, rest, found := strings.Cut(first, ":")
	if !found || strings.TrimSpace(rest) != "" || !plainKey(k) {
		return "", nil, false
	}
	lines := strings.SplitAfter(body, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	ind, okInd := firstIndent(lines)
	if !okInd || ind == 0 {
		return "", nil, false
	}
	v, ok = c.node(body, lines, ind, base)
	return k, v, ok
}

// hasNodeSyntax reports whether text may hold an anchor, an alias, a tag
// or a directive: a '&', '*', '!' or '%' outside comments ("# 1*DEP8 +
// 1*DEP8", "# TP & EP" are common in the corpus's larger recipes). A
// comment here begins with a '#' at the start of a line's content or after
// a blank, with no quote before it on the line (a quoted scalar may hold
// " #", and may span lines: what such a line hides is inside quotes,
// where these characters are text).
func hasNodeSyntax(text string) bool {
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if !strings.ContainsAny(line, "&*!%") {
			continue
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c == '#' && (i == 0 || line[i-1] == ' ') {
				break
			}
			if strings.IndexByte("&*!%'\"", c) >= 0 {
				return true // a quote first: the line is not read further
			}
		}
	}
	return false
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return pyyaml.Resolve(k) == "!!str"
}

// indentOf counts leading spaces; blank and comment lines return -1.
func indentOf(l string) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	if n == len(l) || l[n] == '\n' || l[n] == '#' {
		return -1
	}
	return n
}

func firstIndent(lines []string) (int, bool) {
	for _, l := range lines {
		if i := indentOf(l); i >= 0 {
			return i, true
		}
	}
	return 0, false
}

// node assembles the value of lines (text cut into lines) all indented at
// least ind, whose children begin at exactly ind. Subtrees are memoised by
// text: the parts of a recipe an edit did not touch are neither cut nor
// parsed again, and keep their values (which a diff then skips by
// identity).
//
// base, when not 0, is the line of lines[0] in the recipe block: the value
// is then assembled from placed copies of the pieces (see atLine), and not
// memoised.
func (c *chunks) node(text string, lines []string, ind, base int) (*pyyaml.Value, bool) {
	if base != 0 {
		return c.cut(text, lines, ind, base)
	}
	k := nodeKey{text, ind}
	c.mu.Lock()
	v, ok := c.nodes[k]
	c.mu.Unlock()
	if ok {
		return v, v != nil
	}
	v, ok = c.cut(text, lines, ind, 0)
	if !ok {
		v = nil
	}
	c.mu.Lock()
	c.nodes[k] = v
	c.mu.Unlock()
	return v, ok
}

// kid is one child of a node: its lines and their text, and the index of
// its first line in the node's lines.
type kid struct {
	lines []string
	text  string
	first int
}

// rest is the text of the kid's lines after the first.
func (k kid) rest() string { return k.text[len(k.lines[0]):] }

// maxChunkIndent bounds the indent the chunker cuts at: each level scans
// the lines below it again, so deep nesting (a hostile config of 3000
// levels took the index 10 s) is left to the parser, which reads it once.
// Real recipes nest six levels deep.
const maxChunkIndent = 64

// cut parses lines for node: it cuts them into children and reads each.
func (c *chunks) cut(text string, lines []string, ind, base int) (*pyyaml.Value, bool) {
	if ind > maxChunkIndent {
		return nil, false
	}
	var kids []kid
	at, from := 0, 0 // the offset in text of the line, and of the last kid
	// a kid's lines are a window on lines (which nobody appends to)
	extend := func(n int, l string) {
		k := &kids[len(kids)-1]
		k.lines = lines[k.first : n+1 : n+1]
		k.text = text[from : at+len(l)]
	}
	for n, l := range lines {
		i := indentOf(l)
		switch {
		case i < 0:
			if len(kids) > 0 {
				extend(n, l)
			}
		case i < ind:
			return nil, false
		case i == ind && (len(kids) == 0 || !isItemContinuation(l, ind, kids[len(kids)-1])):
			kids = append(kids, kid{lines: lines[n : n+1 : n+1], text: l, first: n})
			from = at
		default:
			if len(kids) == 0 {
				return nil, false
			}
			extend(n, l)
		}
		at += len(l)
	}
	if len(kids) == 0 {
		return nil, false
	}
	if first := kids[0].lines[0][ind:]; strings.HasPrefix(first, "- ") || strings.TrimSpace(first) == "-" {
		return c.sequence(kids, ind, base)
	}
	return c.mapping(kids, ind, base)
}

// isItemContinuation: inside "key:" followed by "- item" lines at the same
// indent (YAML's compact sequence), the items belong to the key.
func isItemContinuation(l string, ind int, last kid) bool {
	if !strings.HasPrefix(l[ind:], "- ") && strings.TrimSpace(l[ind:]) != "-" {
		return false
	}
	head := last.lines[0][ind:]
	return !strings.HasPrefix(head, "- ") && strings.HasSuffix(strings.TrimSpace(stripComment(head)), ":")
}

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

func dedent(lines []string, n int) string {
	var b strings.Builder
	for _, l := range lines {
		if len(l) >= n && strings.TrimSpace(l[:n]) == "" {
			b.WriteString(l[n:])
		} else {
			b.WriteString(strings.TrimLeft(l, " "))
		}
	}
	return b.String()
}

// single reports whether a piece is one line (plus blank or comment lines).
func single(k []string) bool {
	for _, l := range k[1:] {
		if indentOf(l) >= 0 {
			return false
		}
	}
	return true
}

func (c *chunks) sequence(kids []kid, ind, base int) (*pyyaml.Value, bool) {
	out := &pyyaml.Value{Kind: pyyaml.Seq, Items: make([]*pyyaml.Value, len(kids)), Line: below(base, kids[0].first)}
	// one-line items ("- { tp: 4, ... }") are parsed together: one parser
	// run per list rather than per item
	var batch strings.Builder
	var at []int
	for i, kd := range kids {
		k := kd.lines
		if !strings.HasPrefix(k[0][ind:], "- ") && strings.TrimSpace(k[0][ind:]) != "-" {
			return nil, false
		}
		if single(k) {
			if v, ok := c.line(strings.TrimPrefix(k[0][ind:], "-")); ok {
				out.Items[i] = atLine(v, base, kd.first)
				continue
			}
			batch.WriteString(dedent(k[:1], ind))
			at = append(at, i)
			continue
		}
		// a block mapping item ("- key: v" then "  key2: ...") is cut
		// further, as a mapping two columns in
		if item := k[0][ind+2:]; !strings.HasPrefix(item, " ") {
			if key, _, ok := strings.Cut(item, ":"); ok && plainKey(key) {
				first := k[0][:ind] + "  " + item
				lines := append([]string{first}, k[1:]...)
				if v, ok := c.node(first+kd.rest(), lines, ind+2, below(base, kd.first)); ok && v.Kind == pyyaml.Map {
					out.Items[i] = v
					continue
				}
			}
		}
		v, ok := c.parse(dedent(k, ind))
		if !ok || v.Kind != pyyaml.Seq || len(v.Items) != 1 {
			return nil, false
		}
		out.Items[i] = atLine(v.Items[0], base, kd.first)
	}
	if len(at) > 0 {
		v, ok := c.parse(batch.String())
		if !ok || v.Kind != pyyaml.Seq || len(v.Items) != len(at) {
			return nil, false
		}
		for j, i := range at {
			out.Items[i] = atLine(v.Items[j], base, kids[i].first-j)
		}
	}
	return out, true
}

func (c *chunks) mapping(kids []kid, ind, base int) (*pyyaml.Value, bool) {
	out := &pyyaml.Value{Kind: pyyaml.Map, Pairs: make([]pyyaml.Pair, len(kids)), Line: below(base, kids[0].first)}
	seen := map[string]bool{}
	// one-line "key: value" children are parsed together
	var batch strings.Builder
	var at []int
	for i, kd := range kids {
		k := kd.lines
		head := k[0][ind:]
		key, rest, found := strings.Cut(head, ":")
		if !found || !plainKey(key) || seen[key] {
			return nil, false
		}
		seen[key] = true
		out.Pairs[i].Key = &pyyaml.Value{Kind: pyyaml.Str, Str: key, Line: below(base, kd.first)}
		nested := strings.TrimSpace(stripComment(rest)) == "" && !single(k)
		switch {
		case nested:
			// a nested block: its children at their own indent (a
			// compact sequence may sit at this one)
			sub := k[1:]
			si, ok := firstIndent(sub)
			if !ok || si < ind || (si == ind && !strings.HasPrefix(strings.TrimLeft(firstContent(sub), " "), "-")) {
				return nil, false
			}
			if out.Pairs[i].Value, ok = c.node(kd.rest(), sub, si, below(base, kd.first+1)); !ok {
				return nil, false
			}
		case single(k):
			if v, ok := c.line(rest); ok {
				out.Pairs[i].Value = atLine(v, base, kd.first)
				continue
			}
			batch.WriteString(dedent(k[:1], ind))
			at = append(at, i)
		default: // a value over several lines
			v, ok := c.parse(dedent(k, ind))
			if !ok || v.Kind != pyyaml.Map || len(v.Pairs) != 1 {
				return nil, false
			}
			out.Pairs[i].Value = atLine(v.Pairs[0].Value, base, kd.first)
		}
	}
	if len(at) > 0 {
		v, ok := c.parse(batch.String())
		if !ok || v.Kind != pyyaml.Map || len(v.Pairs) != len(at) {
			return nil, false
		}
		for j, i := range at {
			if v.Pairs[j].Key.Kind != pyyaml.Str || v.Pairs[j].Key.Str != out.Pairs[i].Key.Str {
				return nil, false
			}
			out.Pairs[i].Value = atLine(v.Pairs[j].Value, base, kids[i].first-j)
		}
	}
	return out, true
}

// below is the base of a node whose lines begin at index i of lines
// beginning at line base (0 stays 0: not placing).
func below(base, i int) int {
	if base == 0 {
		return 0
	}
	return base + i
}

// atLine returns piece v, parsed from a text whose first line is at index
// i of lines beginning at line base, as a copy placed there; v itself
// when not placing (base 0). A piece's nodes count lines from 1.
func atLine(v *pyyaml.Value, base, i int) *pyyaml.Value {
	if base == 0 {
		return v
	}
	return shifted(v, base+i-1)
}

// shifted copies v with every line moved by d.
func shifted(v *pyyaml.Value, d int) *pyyaml.Value {
	if v == nil {
		return nil
	}
	w := *v
	w.Line += d
	w.Column = 0
	if v.Items != nil {
		w.Items = make([]*pyyaml.Value, len(v.Items))
		for i, it := range v.Items {
			w.Items[i] = shifted(it, d)
		}
	}
	if v.Pairs != nil {
		w.Pairs = make([]pyyaml.Pair, len(v.Pairs))
		for i, p := range v.Pairs {
			w.Pairs[i] = pyyaml.Pair{Key: shifted(p.Key, d), Value: shifted(p.Value, d)}
		}
	}
	return &w
}

func firstContent(lines []string) string {
	for _, l := range lines {
		if indentOf(l) >= 0 {
			return l
		}
	}
	return ""
}
