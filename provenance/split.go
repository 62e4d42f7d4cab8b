package provenance

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
)

// fileKind says how a tracked file splits into top-level blocks.
type fileKind uint8

const (
	listFile fileKind = iota // the changelog: a YAML list of entries
	mapFile                  // a master config: a mapping of recipe keys
)

// block is one top-level item of a YAML file (a changelog entry, a recipe)
// whose text occurred in some version. Equal texts share one block, so a
// history of hundreds of versions parses each distinct item once.
type block struct {
	id   int // stable within a History and its index
	text string
	kind fileKind
	// src fetches the text of a block restored from an index (text is
	// then "" until the block is loaded)
	src  func(id int) (string, error)
	hash [16]byte // of the text, set on blocks restored from an index

	mu     sync.Mutex       // guards loading and forgetting
	loaded atomic.Bool      // val and err are set
	key    string           // the recipe key (map files)
	val    *pyyaml.Value    // the recipe (map files)
	ent    *changelog.Entry // the entry (list files)
	err    error            // why the block alone does not load
	// known is set on restored changelog blocks: whether the block loads
	// is recorded, so building lineages parses nothing
	known   bool
	knowErr error

	// chunks parses recipes piecewise (see chunk.go); fullVal holds a
	// whole parse, for exact lines, once hasFull is set
	chunks  *chunks
	hasFull bool
	fullVal *pyyaml.Value

	// derived on first use
	entryOnce sync.Once
	entry     *entryInfo
}

// full returns the block's value with its nodes on their lines in the
// block, as a whole parse has them (a piecewise parse's count from their
// piece): placed from the pieces (chunks.placeRecipe), or parsed whole.
func (b *block) full() *pyyaml.Value {
	b.load()
	if b.chunks == nil || b.err != nil {
		return b.val
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.hasFull {
		b.fullVal, b.hasFull = b.val, true
		if k, v, ok := b.chunks.placeRecipe(b.text); ok && k == b.key {
			b.fullVal = v
		} else if v, err := pyyaml.Load([]byte(b.text), pyyaml.Options{}); err == nil && v.Kind == pyyaml.Map && len(v.Pairs) == 1 {
			b.fullVal = v.Pairs[0].Value
		}
	}
	return b.fullVal
}

// forget drops the block's parses (they are made again when asked for).
// The caller makes sure nobody is loading the block meanwhile.
func (b *block) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.known || !b.loaded.Load() {
		return
	}
	b.val, b.ent, b.err, b.fullVal, b.hasFull = nil, nil, nil, nil, false
	b.loaded.Store(false)
}

// failed reports why the block does not load (nil when it does).
func (b *block) failed() error {
	if b.known {
		return b.knowErr
	}
	b.load()
	return b.err
}

// textHash is the key of a block text in an index.
func textHash(text []byte) [16]byte {
	sum := sha256.Sum256(text)
	var h [16]byte
	copy(h[:], sum[:16])
	return h
}

// load parses the block (once until forget; safe for concurrent use).
func (b *block) load() {
	if b.loaded.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.loaded.Load() {
		return
	}
	defer b.loaded.Store(true)
	if b.text == "" && b.src != nil {
		t, err := b.src(b.id)
		if err != nil {
			b.err = err
			return
		}
		b.text = t
	}
	if b.kind == listFile {
		b.ent, b.err = changelog.ParseEntry([]byte(b.text))
		return
	}
	var k string
	k, b.val, b.err = b.parse(b.text, b.chunks)
	if b.key == "" {
		b.key = k
	}
}

// parse reads a recipe's text: piecewise through ch when it can (ch may
// be nil), else whole. It only reads b.kind and b.key, which do not change
// once the block is cut. (An entry is read by changelog.ParseEntry: load.)
func (b *block) parse(text string, ch *chunks) (string, *pyyaml.Value, error) {
	if b.kind == listFile {
		return "", nil, errors.New("an entry is loaded, not parsed")
	}
	if b.kind == mapFile && ch != nil {
		if k, v, ok := ch.parseRecipe(text); ok && (b.key == "" || b.key == k) {
			return k, v, nil
		}
	}
	v, err := pyyaml.Load([]byte(text), pyyaml.Options{})
	switch {
	case err != nil:
		return "", nil, err
	case v.Kind != pyyaml.Map || len(v.Pairs) != 1 || v.Pairs[0].Key.Kind != pyyaml.Str:
		return "", nil, errors.New("not a single mapping key")
	case b.key != "" && b.key != v.Pairs[0].Key.Str:
		return "", nil, fmt.Errorf("the key %q reads as %q", b.key, v.Pairs[0].Key.Str)
	default:
		return v.Pairs[0].Key.Str, v.Pairs[0].Value, nil
	}
}

// value returns the block's value for one use: the loaded one, or, for a
// block nobody loaded, a parse through ch that the block does not keep.
// Materialising a key's history this way parses each version once and
// lets it go: kept on the blocks, every version of every recipe stayed
// parsed (300 MB on a history ten times the corpus).
func (b *block) value(ch *chunks) (*pyyaml.Value, error) {
	if b.src != nil || b.loaded.Load() {
		b.load()
		return b.val, b.err
	}
	_, v, err := b.parse(b.text, ch)
	return v, err
}

// placed is a block at a position of one version.
type placed struct {
	b    *block
	line int32 // 1-based first line in that version
	off  int32 // add to the lines of b.val's nodes for lines in that version
}

// splitter cuts file versions into blocks at column 0 and memoises blocks
// by text.
type splitter struct {
	memo   map[string]*block
	chunks *chunks // shared by the recipe blocks
	// byHash holds blocks restored from an index, whose text is not in
	// memory, by the hash of their text
	byHash map[[16]byte]*block
	nextID int
	// onNew, when set, is told about every new block (to parse it on
	// another core while reading goes on).
	onNew func(*block)
}

func newSplitter() *splitter { return &splitter{memo: map[string]*block{}, chunks: newChunks()} }

// seed makes the blocks of an older History known, so that versions read
// now share them (a delta against the older versions stays small).
func (s *splitter) seed(h *History) {
	s.byHash = map[[16]byte]*block{}
	add := func(b *block) {
		if b.text != "" {
			s.memo[b.text] = b
		} else {
			s.byHash[b.hash] = b
		}
		s.nextID = max(s.nextID, b.id+1)
	}
	var slots []*slot
	if h.cl != nil {
		slots = append(slots, h.cl)
	}
	slots = append(slots, h.cfg...)
	for _, sl := range slots {
		for _, v := range sl.vers {
			for _, b := range v.Mid {
				add(b)
			}
		}
	}
}

// errNoSplit means a version has top-level content the column-0 split does
// not understand (a document marker, a flow collection, a stray scalar); it
// is then loaded whole.
var errNoSplit = errors.New("not splittable at column 0")

// span is a block's text in a version: bytes [start, end), first line.
type span struct {
	start, end, line int
}

// cut finds the top-level blocks of data: a list item starts at a
// column-0 "- " (or a lone "-"), a recipe at a column-0 key. Comment lines
// belong to the block they follow; blank lines between blocks belong to
// none, so appending an entry does not change its predecessor's text.
// Content before the first block may only be comments and blank lines.
func cut(data []byte, kind fileKind) ([]span, error) {
	var out []span
	cur := span{start: -1}
	closeBlock := func() {
		if cur.start >= 0 {
			out = append(out, cur)
		}
	}
	lineNo := 0
	for off := 0; off < len(data); {
		lineNo++
		nl := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if nl >= 0 {
			next = off + nl + 1
		}
		line := data[off:next]
		switch c := line[0]; {
		case len(bytes.TrimSpace(line)) == 0:
			// blank: attached only if the block continues after it
		case c == ' ':
			if cur.start < 0 {
				return nil, fmt.Errorf("line %d: indented content before the first item: %w", lineNo, errNoSplit)
			}
			cur.end = next
		case c == '#':
			if cur.start >= 0 {
				cur.end = next
			}
		case kind == listFile && c == '-' && (len(line) == 1 || line[1] == ' ' || line[1] == '\n' || line[1] == '\r'):
			closeBlock()
			cur = span{off, next, lineNo}
		case kind == mapFile && !bytes.ContainsAny(line[:1], "-?:,[]{}&*!|>'\"%@`\t"):
			closeBlock()
			cur = span{off, next, lineNo}
		default:
			return nil, fmt.Errorf("line %d: %w", lineNo, errNoSplit)
		}
		off = next
	}
	closeBlock()
	return out, nil
}

// blocks cuts a version into its blocks (see cut); a version that does
// not cut is loaded whole and its items rendered back to YAML flow text,
// so equal items still share a block.
func (s *splitter) blocks(data []byte, kind fileKind) ([]*block, error) {
	spans, err := cut(data, kind)
	if errors.Is(err, errNoSplit) {
		return s.whole(data, kind)
	}
	return s.internSpans(data, spans, kind), nil
}

// internSpans interns the blocks of data at spans.
func (s *splitter) internSpans(data []byte, spans []span, kind fileKind) []*block {
	out := make([]*block, len(spans))
	for i, sp := range spans {
		out[i] = s.intern(data[sp.start:sp.end], kind)
	}
	return out
}

// lastCut is the version of a file cut last, kept to cut the next version
// read of the same file: consecutive versions share most of their text,
// so only what lies between their common start and common end is cut
// again (blocksAfter). A history ten times the corpus has a changelog ten
// times as long in ten times as many versions: cutting each version whole
// made reading it grow with the square of the history.
type lastCut struct {
	data   []byte // a copy, or the caller's own when lent
	spans  []span
	blocks []*block
	spare  []span // the spans of the version before, reused for the next
	// lent: the data given to blocksAfter stays valid until its next call
	// (gitscan.ScanStreams), so it is kept without a copy; at ten times
	// the corpus, copying each changelog version took 0.5 s of a build
	lent bool
}

// keep keeps data as the version cut last.
func (last *lastCut) keep(data []byte) {
	if last.lent {
		last.data = data
	} else {
		last.data = append(last.data[:0], data...)
	}
}

// blocksAfter is blocks for the version of a file read after last's
// (which it then holds). Blocks of last that lie in the bytes both
// versions share, with what decides where they end, are taken as they
// are; the rest is cut. The result is blocks'.
func (s *splitter) blocksAfter(last *lastCut, data []byte, kind fileKind) ([]*block, error) {
	prev := last.data
	if prev == nil {
		return s.cutInto(last, data, kind)
	}
	p := commonBytePrefix(prev, data)
	q := commonByteSuffix(prev[p:], data[p:])
	suffixAt := len(prev) - q // where the common end begins in prev
	delta := len(data) - len(prev)
	n := len(last.spans)
	// block i is kept from the start when the first line of block i+1,
	// which ends it, is common too (the line ends grow with the blocks:
	// k is found by bisection, not by a walk over thousands of entries)
	k := sort.Search(n-1, func(i int) bool { return lineEnd(prev, last.spans[i+1].start) > p })
	// block j is kept from the end when it starts in the common end, the
	// newline before it included
	j := k + sort.Search(n-k, func(i int) bool { return last.spans[k+i].start > suffixAt })
	midStart := 0
	if k > 0 {
		midStart = last.spans[k].start
	}
	midEnd := len(data)
	if j < n {
		midEnd = last.spans[j].start + delta
	}
	if midStart > midEnd {
		return s.cutInto(last, data, kind)
	}
	mid, err := cut(data[midStart:midEnd], kind)
	if err != nil {
		return s.cutInto(last, data, kind)
	}
	spans := slices.Grow(last.spare[:0], k+len(mid)+n-j)
	spans = append(spans, last.spans[:k]...)
	blocks := make([]*block, 0, cap(spans))
	blocks = append(blocks, last.blocks[:k]...)
	blocks = append(blocks, s.internSpans(data[midStart:midEnd], mid, kind)...)
	for _, sp := range mid {
		sp.start, sp.end = sp.start+midStart, sp.end+midStart
		spans = append(spans, sp)
	}
	for i := j; i < n; i++ {
		sp := last.spans[i]
		sp.start, sp.end = sp.start+delta, sp.end+delta
		spans = append(spans, sp)
		blocks = append(blocks, last.blocks[i])
	}
	last.keep(data)
	last.spare, last.spans, last.blocks = last.spans, spans, blocks
	return blocks, nil
}

// cutInto cuts a version whole and keeps it in last (nothing when it does
// not cut at column 0: it is loaded whole, as blocks does).
func (s *splitter) cutInto(last *lastCut, data []byte, kind fileKind) ([]*block, error) {
	spans, err := cut(data, kind)
	if errors.Is(err, errNoSplit) {
		last.data, last.spans, last.blocks = nil, nil, nil
		return s.whole(data, kind)
	}
	out := s.internSpans(data, spans, kind)
	last.keep(data)
	last.spare, last.spans, last.blocks = last.spans, spans, out
	return out, nil
}

// lineEnd is the end of the line starting at off (after its newline).
func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// commonBytePrefix counts the bytes a and b begin with alike (compared a page
// at a time first: consecutive versions share megabytes).
func commonBytePrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && bytes.Equal(a[i:i+4096], b[i:i+4096]) {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonByteSuffix counts the bytes a and b end with alike.
func commonByteSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && bytes.Equal(a[len(a)-i-4096:len(a)-i], b[len(b)-i-4096:len(b)-i]) {
		i += 4096
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// split is blocks with each block's position in the version.
func (s *splitter) split(data []byte, kind fileKind) ([]placed, error) {
	spans, err := cut(data, kind)
	if errors.Is(err, errNoSplit) {
		return s.wholePlaced(data, kind)
	}
	out := make([]placed, len(spans))
	for i, sp := range spans {
		out[i] = placed{s.intern(data[sp.start:sp.end], kind), int32(sp.line), int32(sp.line - 1)}
	}
	return out, nil
}

// intern returns the block holding text, creating it on first sight. A
// recipe block's key is read off its first line ("key:"), so versions can
// be compared key by key before (or without) parsing.
func (s *splitter) intern(text []byte, kind fileKind) *block {
	if b, ok := s.memo[string(text)]; ok && b.kind == kind {
		return b
	}
	if len(s.byHash) > 0 {
		if b, ok := s.byHash[textHash(text)]; ok && b.kind == kind {
			return b
		}
	}
	b := &block{id: s.nextID, text: string(text), kind: kind}
	if kind == mapFile {
		b.chunks = s.chunks
	}
	s.nextID++
	if kind == mapFile {
		// the key as the line says it (quoted keys hold ':'); one it does
		// not say plainly is the parse's
		first, _, _ := strings.Cut(b.text, "\n")
		b.key, _ = config.TopKey(first)
	}
	s.memo[b.text] = b
	if s.onNew != nil {
		s.onNew(b)
	}
	return b
}

// loadAll parses every block of a kind not parsed yet, on all cores.
func (s *splitter) loadAll(workers int, kind fileKind) {
	ch := make(chan *block, 256)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ch {
				if b.kind == listFile {
					b.info()
				} else {
					b.load()
				}
			}
		}()
	}
	for _, b := range s.memo {
		if b.kind == kind {
			ch <- b
		}
	}
	// (for changelog entries, workers compute what the history needs and
	// drop the parsed value; see block.info)
	close(ch)
	wg.Wait()
}

// whole loads a version that does not cut at column 0 in one parse.
func (s *splitter) whole(data []byte, kind fileKind) ([]*block, error) {
	ps, err := s.wholePlaced(data, kind)
	if err != nil {
		return nil, err
	}
	out := make([]*block, len(ps))
	for i, p := range ps {
		out[i] = p.b
	}
	return out, nil
}

func (s *splitter) wholePlaced(data []byte, kind fileKind) ([]placed, error) {
	opt := pyyaml.Options{UniqueKeys: kind == listFile}
	v, err := pyyaml.Load(data, opt)
	if err != nil {
		return nil, err
	}
	var out []placed
	switch {
	case v.Kind == pyyaml.Null:
	case kind == listFile && v.Kind == pyyaml.Seq:
		for _, it := range v.Items {
			b := s.intern([]byte("- "+pyyaml.Render(it)+"\n"), kind)
			out = append(out, placed{b, int32(it.Line), int32(it.Line - 1)})
		}
	case kind == mapFile && v.Kind == pyyaml.Map:
		for _, p := range v.Pairs {
			if p.Key.Kind != pyyaml.Str {
				return nil, fmt.Errorf("line %d: recipe key %s is not a string", p.Key.Line, p.Key.Repr())
			}
			b := s.intern([]byte(pyyaml.Render(p.Key)+": "+pyyaml.Render(p.Value)+"\n"), kind)
			b.key = p.Key.Str // parsed: whatever its line looks like
			out = append(out, placed{b, int32(p.Key.Line), int32(p.Key.Line - 1)})
		}
	default:
		return nil, fmt.Errorf("the root is a %s, not a %s", v.Kind, map[fileKind]string{listFile: "list", mapFile: "mapping"}[kind])
	}
	return out, nil
}
