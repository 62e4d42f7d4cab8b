package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// Block is one top-level key of a master config file and its text (the
// key line to the line before the next top-level key).
type Block struct {
	Key  string
	Line int // 1-based line of the key
	Text []byte
}

// aliasLike finds what could be an anchor, alias or merge key outside
// comments: a file using them cannot be read block by block.
var aliasLike = regexp.MustCompile(`(^|[\s\[{,:-])[&*][^\s,\]}]|<<\s*:`)

// SplitBlocks splits a master config at its top-level keys, so that a
// change can be judged by parsing only the recipes whose text changed. ok
// is false when the file uses YAML a block-wise reading could misread
// (anchors and aliases, merge keys, directives, documents, flow or
// complex top-level keys): parse it whole then (LoadMaster).
func SplitBlocks(data []byte) (blocks []Block, ok bool) {
	line, off := 0, 0
	starts := []int{}
	for off < len(data) {
		line++
		l := data[off:]
		next := len(data)
		if n := bytes.IndexByte(l, '\n'); n >= 0 {
			l, next = l[:n], off+n+1
		}
		at := off
		off = next
		if bytes.ContainsAny(l, "&*<") && aliasLike.Match(stripComment(l)) {
			return nil, false
		}
		if len(l) == 0 || l[0] == ' ' || l[0] == '#' || l[0] == '\r' {
			continue
		}
		if strings.IndexByte("\t-%{[?!&*|>@`", l[0]) >= 0 {
			return nil, false
		}
		key, ok := TopKey(string(l))
		if !ok {
			return nil, false
		}
		blocks = append(blocks, Block{Key: key, Line: line})
		starts = append(starts, at)
	}
	for i := range blocks {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		blocks[i].Text = data[starts[i]:end]
	}
	return blocks, true
}

// ParseBlock parses one block of a master config file as PyYAML would
// parse it in place (line numbers are the file's).
func ParseBlock(file string, b Block) (*Recipe, error) {
	src := make([]byte, 0, b.Line-1+len(b.Text))
	for i := 1; i < b.Line; i++ {
		src = append(src, '\n')
	}
	src = append(src, b.Text...)
	v, err := pyyaml.Load(src, pyyaml.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if v.Kind != pyyaml.Map || len(v.Pairs) != 1 || v.Pairs[0].Key.Kind != pyyaml.Str || v.Pairs[0].Key.Str != b.Key {
		return nil, fmt.Errorf("%s:%d: the block of %q does not read as one key", file, b.Line, b.Key)
	}
	return NewRecipe(b.Key, file, v.Pairs[0].Key.Line, v.Pairs[0].Value), nil
}

// TopKey returns the key of a top-level "key: ..." line (plain, or
// quoted without escapes).
func TopKey(l string) (string, bool) {
	l = strings.TrimRight(l, "\r")
	if l[0] == '"' || l[0] == '\'' {
		end := strings.IndexByte(l[1:], l[0])
		if end < 0 || strings.Contains(l[1:end+1], "\\") || strings.Contains(l[1:end+1], "''") {
			return "", false
		}
		rest := strings.TrimLeft(l[end+2:], " ")
		if !strings.HasPrefix(rest, ":") {
			return "", false
		}
		return l[1 : end+1], true
	}
	i := strings.Index(l, ": ")
	if i < 0 {
		if !strings.HasSuffix(l, ":") {
			return "", false
		}
		i = len(l) - 1
	}
	k := strings.TrimRight(l[:i], " ")
	if k == "" || strings.ContainsAny(k, "#:{}[],\"'") {
		return "", false
	}
	return k, true
}

// stripComment drops a "#" comment (a "#" at the start or after a space,
// outside quotes) from a line.
func stripComment(l []byte) []byte {
	var q byte
	for i, c := range l {
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			if i == 0 || l[i-1] == ' ' || l[i-1] == ':' || l[i-1] == '[' || l[i-1] == '{' || l[i-1] == ',' {
				q = c
			}
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}
