package provenance

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/perflog/perflog/pyyaml"
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
	text string
	kind fileKind
	// line is the block's first line in the version it was split from;
	// it differs between versions and is kept per version (see version).
	once sync.Once
	key  string        // the recipe key (map files)
	val  *pyyaml.Value // the entry (list files) or the recipe (map files)
	err  error         // why the block alone does not load

	// derived on first use
	entryOnce sync.Once
	entry     *entryInfo
}

// load parses the block (once; safe for concurrent use).
func (b *block) load() {
	b.once.Do(func() {
		opt := pyyaml.Options{UniqueKeys: b.kind == listFile}
		v, err := pyyaml.Load([]byte(b.text), opt)
		switch {
		case err != nil:
			b.err = err
		case b.kind == listFile && (v.Kind != pyyaml.Seq || len(v.Items) != 1):
			b.err = errors.New("not a single list item")
		case b.kind == listFile:
			b.val = v.Items[0]
		case v.Kind != pyyaml.Map || len(v.Pairs) != 1 || v.Pairs[0].Key.Kind != pyyaml.Str:
			b.err = errors.New("not a single mapping key")
		case b.key != "" && b.key != v.Pairs[0].Key.Str:
			b.err = fmt.Errorf("the key %q reads as %q", b.key, v.Pairs[0].Key.Str)
		default:
			b.key, b.val = v.Pairs[0].Key.Str, v.Pairs[0].Value
		}
	})
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
	memo map[string]*block
	// onNew, when set, is told about every new block (to parse it on
	// another core while reading goes on).
	onNew func(*block)
}

func newSplitter() *splitter { return &splitter{memo: map[string]*block{}} }

// clone returns a splitter with its own memo, for use on another
// goroutine.
func (s *splitter) clone() *splitter { return newSplitter() }

// errNoSplit means a version has top-level content the column-0 split does
// not understand (a document marker, a flow collection, a stray scalar); it
// is then loaded whole.
var errNoSplit = errors.New("not splittable at column 0")

// split cuts data into its top-level blocks: a list item starts at a
// column-0 "- " (or a lone "-"), a recipe at a column-0 key. Comment lines
// belong to the block they follow; blank lines between blocks belong to
// none, so appending an entry does not change its predecessor's text.
// Content before the first block may only be comments and blank lines.
func (s *splitter) split(data []byte, kind fileKind) ([]placed, error) {
	var out []placed
	start, startLine := -1, 0 // current block
	end := -1                 // end of its last non-blank line
	lineNo := 0
	closeBlock := func() {
		if start >= 0 {
			out = append(out, placed{s.intern(data[start:end], kind), int32(startLine), int32(startLine - 1)})
		}
	}
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
			if start < 0 {
				return nil, fmt.Errorf("line %d: indented content before the first item: %w", lineNo, errNoSplit)
			}
			end = next
		case c == '#':
			if start >= 0 {
				end = next
			}
		case kind == listFile && c == '-' && (len(line) == 1 || line[1] == ' ' || line[1] == '\n' || line[1] == '\r'):
			closeBlock()
			start, end, startLine = off, next, lineNo
		case kind == mapFile && !bytes.ContainsAny(line[:1], "-?:,[]{}&*!|>'\"%@`\t"):
			closeBlock()
			start, end, startLine = off, next, lineNo
		default:
			return nil, fmt.Errorf("line %d: %w", lineNo, errNoSplit)
		}
		off = next
	}
	closeBlock()
	return out, nil
}

// intern returns the block holding text, creating it on first sight. A
// recipe block's key is read off its first line ("key:"), so versions can
// be compared key by key before (or without) parsing.
func (s *splitter) intern(text []byte, kind fileKind) *block {
	if b, ok := s.memo[string(text)]; ok && b.kind == kind {
		return b
	}
	b := &block{text: string(text), kind: kind}
	if kind == mapFile {
		first, _, _ := strings.Cut(b.text, "\n")
		k, _, _ := strings.Cut(first, ":")
		b.key = strings.TrimSpace(k)
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
				b.load()
			}
		}()
	}
	for _, b := range s.memo {
		if b.kind == kind {
			ch <- b
		}
	}
	close(ch)
	wg.Wait()
}

// wholeFile loads a version that does not split at column 0 in one parse
// and returns its items as blocks (not memoised: such versions are rare).
func wholeFile(data []byte, kind fileKind) ([]placed, error) {
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
			b := &block{kind: kind, val: it}
			b.once.Do(func() {})
			out = append(out, placed{b, int32(it.Line), 0})
		}
	case kind == mapFile && v.Kind == pyyaml.Map:
		for _, p := range v.Pairs {
			if p.Key.Kind != pyyaml.Str {
				return nil, fmt.Errorf("line %d: recipe key %s is not a string", p.Key.Line, p.Key.Repr())
			}
			b := &block{kind: kind, key: p.Key.Str, val: p.Value}
			b.once.Do(func() {})
			out = append(out, placed{b, int32(p.Key.Line), 0})
		}
	default:
		return nil, fmt.Errorf("the root is a %s, not a %s", v.Kind, map[fileKind]string{listFile: "list", mapFile: "mapping"}[kind])
	}
	return out, nil
}
