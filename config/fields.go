package config

import (
	"crypto/sha256"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/internal/xdiff"
)

// Field is one leaf of a recipe: a scalar, a list of scalars (conc-list,
// additional-settings) or an empty mapping or list, with its path, e.g.
// "image" or "scenarios.fixed-seq-len[0].search-space[1].conc-list".
type Field struct {
	Path  string
	Value string // the value in YAML flow style (see Render)
	Line  int    // 1-based line of the value in its file
	v     *pyyaml.Value
}

// Fields lists the leaves of the recipe in document order (none for a
// nil recipe).
func (r *Recipe) Fields() []Field {
	if r == nil {
		return nil
	}
	var out []Field
	flatten(r.v, "", &out)
	return out
}

func flatten(v *pyyaml.Value, path string, out *[]Field) {
	switch {
	case v != nil && v.Kind == pyyaml.Map && len(v.Pairs) > 0:
		for _, p := range v.Pairs {
			flatten(p.Value, joinKey(path, p.Key), out)
		}
	case v != nil && (v.Kind == pyyaml.Seq || v.Kind == pyyaml.Set) && !scalarList(v):
		for i, it := range v.Items {
			flatten(it, path+"["+strconv.Itoa(i)+"]", out)
		}
	default:
		line := 0
		if v != nil {
			line = v.Line
		}
		*out = append(*out, Field{Path: path, Value: pyyaml.Render(v), Line: line, v: v})
	}
}

// scalarList reports whether a list holds only scalars (a leaf).
func scalarList(v *pyyaml.Value) bool {
	for _, it := range v.Items {
		if it.Kind == pyyaml.Map || it.Kind == pyyaml.Seq || it.Kind == pyyaml.Set {
			return false
		}
	}
	return true
}

// joinKey appends a mapping key to a path; keys that would be ambiguous in
// a dotted path are written ["like.this"].
func joinKey(path string, k *pyyaml.Value) string {
	s := k.Str
	if k.Kind != pyyaml.Str {
		s = pyyaml.Render(k)
	}
	if s == "" || strings.ContainsAny(s, ".[]\" ") {
		return path + "[" + strconv.Quote(s) + "]"
	}
	if path == "" {
		return s
	}
	return path + "." + s
}

// ChangeKind classifies a Change.
type ChangeKind string

// Change kinds.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
)

// Change is one difference between two versions of a recipe. Added and
// removed subtrees are one change each (their value rendered whole);
// changed leaves are one change each.
type Change struct {
	Kind ChangeKind
	// Path is the field's path in the new version (for a removal: in the
	// old version); OldPath its path in the old version, which differs
	// when a list item or subtree moved.
	Path, OldPath string
	Old, New      string // rendered values ("" for the absent side)
	Line          int    // line in the new version (old version for a removal)
	oldV, newV    *pyyaml.Value
}

// Leaves lists the leaf fields of the change's value at their full paths:
// the subtree a change added (or removed, from the old version), or the
// changed leaf's new value. A change read back from an index has none.
func (c Change) Leaves() []Field {
	v := c.newV
	if c.Kind == Removed {
		v = c.oldV
	}
	if v == nil {
		return nil
	}
	var out []Field
	flatten(v, c.Path, &out)
	return out
}

// RecipeDiff is the structural difference between two versions of a
// recipe.
//
// Mappings are compared key by key. Lists of mappings are aligned, not
// compared by index: items with identical content are matched in order
// (an LCS, as for changelog entries), and the items left between two
// matches are paired in order as edits; unmatched items are added or
// removed. A subtree that disappears from one path and reappears at another
// with mostly the same leaves (a restructure such as seq-len-configs →
// scenarios.fixed-seq-len) is a move, diffed in place, not a removal plus
// an addition. Lists of scalars (conc-list) and scalars are leaves.
type RecipeDiff struct {
	Changes []Change
	// Moves maps the path of a moved list item or subtree in the new
	// version to its path in the old version.
	Moves map[string]string
}

// OldPath maps a path of the new version to the old version (following
// moves of enclosing items).
func (d *RecipeDiff) OldPath(p string) string {
	best := ""
	for k := range d.Moves {
		if len(k) > len(best) && HasPathPrefix(p, k) {
			best = k
		}
	}
	if best == "" {
		return p
	}
	return d.Moves[best] + p[len(best):]
}

// NewPath is the inverse of OldPath.
func (d *RecipeDiff) NewPath(p string) string {
	best, bestNew := "", ""
	for k, old := range d.Moves {
		if len(old) > len(best) && HasPathPrefix(p, old) {
			best, bestNew = old, k
		}
	}
	if best == "" {
		return p
	}
	return bestNew + p[len(best):]
}

// HasPathPrefix reports whether prefix is p or an ancestor path of p
// ("" is the root, everything's ancestor).
func HasPathPrefix(p, prefix string) bool {
	if prefix == "" {
		return true
	}
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	return len(p) == len(prefix) || p[len(prefix)] == '.' || p[len(prefix)] == '['
}

// MoveThreshold is the share of leaves two subtrees must have in common
// to count as one subtree moved.
const MoveThreshold = 0.5

// Diff compares two versions of a recipe (either may be nil: absent).
func Diff(old, new *Recipe) *RecipeDiff { return DiffMemo(old, new, nil) }

// DiffMemo is Diff with a memo of per-value results shared by many diffs
// (values shared between versions are then measured once); nil for none.
func DiffMemo(old, new *Recipe, m *Memo) *RecipeDiff { return diffValues(old.raw(), new.raw(), m) }

// DiffYAML compares two versions of a YAML document (nil data: absent)
// as Diff compares recipes; it fails when a side does not parse.
func DiffYAML(old, new []byte) (*RecipeDiff, error) {
	var v [2]*pyyaml.Value
	for i, data := range [][]byte{old, new} {
		if data == nil {
			continue
		}
		x, err := pyyaml.Load(data, pyyaml.Options{})
		if err != nil {
			return nil, err
		}
		v[i] = x
	}
	return diffValues(v[0], v[1], nil), nil
}

func diffValues(old, new *pyyaml.Value, m *Memo) *RecipeDiff {
	d := newDiffer(m)
	d.node(old, new, "", "")
	d.pairMoves()
	// rendered once the moves are paired: a paired subtree leaves its
	// enclosing change, whose rendering would be thrown away
	for i := range d.changes {
		c := &d.changes[i]
		if c.Old == "" && c.oldV != nil {
			c.Old = pyyaml.Render(c.oldV)
		}
		if c.New == "" && c.newV != nil {
			c.New = pyyaml.Render(c.newV)
		}
	}
	return &RecipeDiff{Changes: d.changes, Moves: d.moves}
}

// similarityMemo is the share of leaves two values have in common once
// aligned (1 for equal values), with a shared memo (see DiffMemo).
func similarityMemo(a, b *pyyaml.Value, m *Memo) float64 { return newDiffer(m).similarity(a, b) }

// Memo caches the content digest and the leaf count of values; safe for
// concurrent use. Values must not change while memoised.
type Memo struct {
	mu     sync.Mutex
	canon  map[*pyyaml.Value]string
	leaves map[*pyyaml.Value]int
}

// NewMemo returns an empty memo.
func NewMemo() *Memo {
	return &Memo{canon: map[*pyyaml.Value]string{}, leaves: map[*pyyaml.Value]int{}}
}

func newDiffer(m *Memo) *differ {
	if m == nil {
		m = NewMemo()
	}
	return &differ{moves: map[string]string{}, memo: m}
}

// similarity is similarityMemo with d's memos.
func (d *differ) similarity(a, b *pyyaml.Value) float64 {
	if a == nil || b == nil {
		return 0
	}
	na, nb := d.countLeaves(a), d.countLeaves(b)
	n := max(na, nb)
	if n == 0 {
		return 1
	}
	sub := &differ{moves: map[string]string{}, noMoves: true, memo: d.memo}
	sub.node(a, b, "", "")
	return float64(sub.same) / float64(n)
}

// digest identifies a value's content: equal digests mean values equal
// the way Canonical compares them, but for mapping keys, which must also
// be of one kind (as lookupKey matches them). It is a hash tree (a
// mapping hashes its sorted keys and its values' digests), memoised per
// value, so values shared between versions are hashed once and the memo
// stays small.
func (d *differ) digest(v *pyyaml.Value) string {
	m := d.memo
	m.mu.Lock()
	c, ok := m.canon[v]
	m.mu.Unlock()
	if ok {
		return c
	}
	h := sha256.New()
	switch {
	case v != nil && v.Kind == pyyaml.Map:
		parts := make([]string, len(v.Pairs))
		for i, p := range v.Pairs {
			// keys as lookupKey tells them apart: a key 1 and a key
			// true are different keys, though equal as leaves
			parts[i] = strconv.Itoa(int(p.Key.Kind)) + pyyaml.Canonical(p.Key) + "\x00" + d.digest(p.Value)
		}
		sort.Strings(parts)
		h.Write([]byte("{"))
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{1})
		}
	case v != nil && v.Kind == pyyaml.Seq:
		h.Write([]byte("["))
		for _, it := range v.Items {
			h.Write([]byte(d.digest(it)))
		}
	default:
		h.Write([]byte("="))
		h.Write([]byte(pyyaml.Canonical(v)))
	}
	c = string(h.Sum(nil)[:16])
	m.mu.Lock()
	m.canon[v] = c
	m.mu.Unlock()
	return c
}

func (d *differ) countLeaves(v *pyyaml.Value) int {
	m := d.memo
	m.mu.Lock()
	n, ok := m.leaves[v]
	m.mu.Unlock()
	if ok {
		return n
	}
	n = countLeaves(v)
	m.mu.Lock()
	m.leaves[v] = n
	m.mu.Unlock()
	return n
}

func countLeaves(v *pyyaml.Value) int {
	switch {
	case v != nil && v.Kind == pyyaml.Map && len(v.Pairs) > 0:
		n := 0
		for _, p := range v.Pairs {
			n += countLeaves(p.Value)
		}
		return n
	case v != nil && (v.Kind == pyyaml.Seq || v.Kind == pyyaml.Set) && !scalarList(v):
		n := 0
		for _, it := range v.Items {
			n += countLeaves(it)
		}
		return n
	}
	return 1
}

// walkEqual makes node walk subtrees of equal content too, instead of
// taking their digests' word (tests compare both ways).
var walkEqual bool

type differ struct {
	changes []Change
	moves   map[string]string
	same    int  // unchanged leaves
	noMoves bool // only count: no changes recorded, no moves paired
	memo    *Memo
}

func (d *differ) add(c Change) {
	if !d.noMoves {
		d.changes = append(d.changes, c)
	}
}

func isMap(v *pyyaml.Value) bool { return v != nil && v.Kind == pyyaml.Map && len(v.Pairs) > 0 }
func isList(v *pyyaml.Value) bool {
	return v != nil && (v.Kind == pyyaml.Seq || v.Kind == pyyaml.Set) && len(v.Items) > 0 && !scalarList(v)
}

func line(v *pyyaml.Value) int {
	if v == nil {
		return 0
	}
	return v.Line
}

// node diffs old (at oldPath) against new (at path).
func (d *differ) node(old, new *pyyaml.Value, path, oldPath string) {
	switch {
	case old == nil && new == nil:
	case old == new: // one parsed piece shared by both versions
		d.same += d.countLeaves(new)
	case old == nil:
		d.add(Change{Kind: Added, Path: path, Line: line(new), newV: new})
	case new == nil:
		d.add(Change{Kind: Removed, Path: oldPath, OldPath: oldPath, Line: line(old), oldV: old})
	case !walkEqual && path == oldPath && d.digest(old) == d.digest(new):
		// equal content in place: every leaf unchanged, and no item can
		// have moved (the digest of a list is ordered), so walking it
		// would record nothing
		d.same += d.countLeaves(new)
	case isMap(old) && isMap(new):
		for _, p := range old.Pairs {
			nv := lookupKey(new, p.Key)
			d.node(p.Value, nv, d.join(path, p.Key), d.join(oldPath, p.Key))
		}
		for _, p := range new.Pairs {
			if lookupKey(old, p.Key) == nil {
				d.node(nil, p.Value, d.join(path, p.Key), d.join(oldPath, p.Key))
			}
		}
	case isList(old) && isList(new):
		d.list(old, new, path, oldPath)
	default:
		if d.digest(old) == d.digest(new) {
			d.same += d.countLeaves(new)
			return
		}
		d.add(Change{Kind: Changed, Path: path, OldPath: oldPath, Line: line(new), oldV: old, newV: new})
	}
}

// join is joinKey, but for a differ that only counts, which needs no paths.
func (d *differ) join(path string, k *pyyaml.Value) string {
	if d.noMoves {
		return ""
	}
	return joinKey(path, k)
}

func lookupKey(m *pyyaml.Value, k *pyyaml.Value) *pyyaml.Value {
	for _, p := range m.Pairs {
		if k.Kind == pyyaml.Str {
			if p.Key.Kind == pyyaml.Str && p.Key.Str == k.Str {
				return p.Value
			}
		} else if p.Key.Kind == k.Kind && pyyaml.Canonical(p.Key) == pyyaml.Canonical(k) {
			return p.Value
		}
	}
	return nil
}

// list aligns two lists of structures item by item.
func (d *differ) list(old, new *pyyaml.Value, path, oldPath string) {
	a := make([]string, len(old.Items))
	for i, it := range old.Items {
		a[i] = d.digest(it)
	}
	b := make([]string, len(new.Items))
	for i, it := range new.Items {
		b[i] = d.digest(it)
	}
	item := func(p string, i int) string {
		if d.noMoves {
			return "" // a count needs no paths
		}
		return p + "[" + strconv.Itoa(i) + "]"
	}
	xdiff.Match(a, b, func(i, j int) {
		d.move(item(path, j), item(oldPath, i))
		d.same += d.countLeaves(new.Items[j])
	}, func(gi, gj []int) {
		// items between matches: a search-space row continues the old
		// row of the same parallelism, wherever it stood (see RowKey);
		// other items are edits in order; what remains is added or
		// removed
		pairs := pairGap(old, new, gi, gj)
		usedI, usedJ := map[int]bool{}, map[int]bool{}
		for _, p := range pairs {
			i, j := p[0], p[1]
			usedI[i], usedJ[j] = true, true
			d.move(item(path, j), item(oldPath, i))
			d.node(old.Items[i], new.Items[j], item(path, j), item(oldPath, i))
		}
		for _, i := range gi {
			if !usedI[i] {
				d.node(old.Items[i], nil, "", item(oldPath, i))
			}
		}
		for _, j := range gj {
			if !usedJ[j] {
				d.node(nil, new.Items[j], item(path, j), "")
			}
		}
	})
}

// pairGap pairs the old and new items of a gap between matched items:
// search-space rows by their parallelism (RowKey: a row never continues
// a row of other parallelism), other items in order.
func pairGap(old, new *pyyaml.Value, gi, gj []int) [][2]int {
	var out [][2]int
	var oi, nj []int // items that are not rows
	byKey := map[string][]int{}
	for _, i := range gi {
		if k, ok := rowKey(old.Items[i]); ok {
			byKey[k] = append(byKey[k], i)
		} else {
			oi = append(oi, i)
		}
	}
	for _, j := range gj {
		k, ok := rowKey(new.Items[j])
		if !ok {
			nj = append(nj, j)
			continue
		}
		if l := byKey[k]; len(l) > 0 {
			out = append(out, [2]int{l[0], j})
			byKey[k] = l[1:]
		}
	}
	for k := 0; k < min(len(oi), len(nj)); k++ {
		out = append(out, [2]int{oi[k], nj[k]})
	}
	return out
}

// rowKey is the parallelism of a search-space row: tp, ep (1 when
// absent), dp-attn (false), spec-decoding (none), and for a multi-node
// row those of its prefill and decode workers. ok is false for an item
// that is not a row.
func rowKey(v *pyyaml.Value) (string, bool) {
	if v == nil || v.Kind != pyyaml.Map {
		return "", false
	}
	side := func(w *pyyaml.Value) string {
		get := func(f, def string) string {
			if x, ok := w.Get(f); ok {
				return pyyaml.Canonical(x)
			}
			return def
		}
		return get("tp", "~") + "/" + get("ep", pyyaml.Canonical(&pyyaml.Value{Kind: pyyaml.Int, Int: big.NewInt(1)})) + "/" + get("dp-attn", "n0")
	}
	spec := "none"
	if x, ok := v.Get("spec-decoding"); ok {
		spec = pyyaml.Canonical(x)
	}
	_, hasTP := v.Get("tp")
	pf, hasPrefill := v.Get("prefill")
	switch {
	case hasTP:
		return side(v) + "|" + spec, true
	case hasPrefill:
		dec, _ := v.Get("decode")
		return side(pf) + "+" + side(dec) + "|" + spec, true
	}
	return "", false
}

func (d *differ) move(newPath, oldPath string) {
	if !d.noMoves && newPath != oldPath {
		d.moves[newPath] = oldPath
	}
}

// pairMoves turns a removed subtree and an added subtree that share most
// of their leaves into a move of one subtree.
func (d *differ) pairMoves() {
	if d.noMoves {
		return
	}
	var rem, add []moveNode
	for ci, c := range d.changes {
		switch c.Kind {
		case Removed:
			eachStruct(c.oldV, c.Path, func(p string, v *pyyaml.Value) { rem = append(rem, moveNode{ci, p, v}) })
		case Added:
			eachStruct(c.newV, c.Path, func(p string, v *pyyaml.Value) { add = append(add, moveNode{ci, p, v}) })
		}
	}
	if len(rem) == 0 || len(add) == 0 {
		return
	}
	var cands []candidate
	for ri, r := range rem {
		for ai, a := range add {
			if isMap(r.v) != isMap(a.v) {
				continue
			}
			if kr, ok := rowKey(r.v); ok {
				if ka, ok := rowKey(a.v); ok && ka != kr {
					continue // a row never continues a row of other parallelism
				}
			}
			nr, na := d.countLeaves(r.v), d.countLeaves(a.v)
			if float64(min(nr, na)) < MoveThreshold*float64(max(nr, na)) {
				continue // cannot reach the threshold
			}
			cands = append(cands, candidate{ri, ai, max(nr, na)})
		}
	}
	pairs := pickMoves(d, rem, add, cands)
	if len(pairs) == 0 {
		return
	}
	// rebuild: the paired subtrees leave their enclosing additions and
	// removals and are diffed in place
	var paired []string // paths (new paths for additions, old for removals)
	touched := map[int]bool{}
	for _, p := range pairs {
		r, a := rem[p[0]], add[p[1]]
		touched[r.change], touched[a.change] = true, true
		paired = append(paired, r.path, a.path)
	}
	orig := d.changes
	d.changes = nil
	for ci, c := range orig {
		if !touched[ci] {
			d.changes = append(d.changes, c)
			continue
		}
		if c.Kind == Added {
			d.remainder(c.newV, c.Path, paired, false)
		} else {
			d.remainder(c.oldV, c.Path, paired, true)
		}
	}
	for _, p := range pairs {
		r, a := rem[p[0]], add[p[1]]
		d.moves[a.path] = r.path
		d.node(r.v, a.v, a.path, r.path)
	}
}

// remainder re-emits an addition (or removal) of v at path without the
// paired subtrees inside it.
func (d *differ) remainder(v *pyyaml.Value, path string, paired []string, removed bool) {
	inside := false
	for _, p := range paired {
		if p == path {
			return
		}
		if HasPathPrefix(p, path) {
			inside = true
		}
	}
	if !inside {
		if removed {
			d.node(v, nil, "", path)
		} else {
			d.node(nil, v, path, "")
		}
		return
	}
	switch {
	case isMap(v):
		for _, p := range v.Pairs {
			d.remainder(p.Value, joinKey(path, p.Key), paired, removed)
		}
	case isList(v):
		for i, it := range v.Items {
			d.remainder(it, path+"["+strconv.Itoa(i)+"]", paired, removed)
		}
	}
}

// eachStruct calls fn for v and every mapping or list of structures in it.
func eachStruct(v *pyyaml.Value, path string, fn func(string, *pyyaml.Value)) {
	switch {
	case isMap(v):
		fn(path, v)
		for _, p := range v.Pairs {
			eachStruct(p.Value, joinKey(path, p.Key), fn)
		}
	case isList(v):
		fn(path, v)
		for i, it := range v.Items {
			eachStruct(it, path+"["+strconv.Itoa(i)+"]", fn)
		}
	}
}
