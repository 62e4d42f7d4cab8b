package pyyaml

import (
	"bytes"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// checkTabs reports the first tab PyYAML's scanner would reject. yaml.v3
// accepts tabs as separators between tokens ("key:\tvalue", "[1,\t2]",
// trailing tabs); PyYAML accepts them only inside quoted scalars, block
// scalar bodies and comments.
func checkTabs(data []byte, doc *yaml.Node) error {
	if bytes.IndexByte(data, '\t') < 0 {
		return nil
	}
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineEnd := func(l int) int { // exclusive, without the newline
		if l+1 < len(starts) {
			return starts[l+1] - 1
		}
		return len(data)
	}
	offset := func(line, col int) int { // 1-based line, rune column
		if line < 1 || line > len(starts) {
			return -1
		}
		o := starts[line-1]
		for i := 1; i < col && o < len(data) && data[o] != '\n'; i++ {
			_, n := utf8.DecodeRune(data[o:])
			o += n
		}
		return o
	}
	allowed := make([]bool, len(data))
	mark := func(from, to int) {
		for i := max(from, 0); i < to && i < len(data); i++ {
			allowed[i] = true
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for _, c := range n.Content {
			walk(c)
		}
		if n.Kind != yaml.ScalarNode {
			return
		}
		start := offset(n.Line, n.Column)
		if start < 0 {
			return
		}
		switch {
		case n.Style&yaml.DoubleQuotedStyle != 0:
			mark(start, quotedEnd(data, start, '"'))
		case n.Style&yaml.SingleQuotedStyle != 0:
			mark(start, quotedEnd(data, start, '\''))
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			// the body: following lines until one that is non-blank and no
			// more indented than the indicator's line
			base := indentOf(data[starts[n.Line-1]:lineEnd(n.Line-1)])
			end := lineEnd(n.Line - 1)
			for l := n.Line; l < len(starts); l++ {
				text := data[starts[l]:lineEnd(l)]
				if len(bytes.TrimLeft(text, " \t")) > 0 && indentOf(text) <= base {
					break
				}
				end = lineEnd(l)
			}
			mark(lineEnd(n.Line-1), end)
		}
	}
	walk(doc)
	for l := range starts {
		from, to := starts[l], lineEnd(l)
		if bytes.IndexByte(data[from:to], '\t') < 0 {
			continue
		}
		// a '#' at line start or after a space, outside quotes, starts a comment
		for i := from; i < to; i++ {
			if allowed[i] {
				continue
			}
			if data[i] == '#' && (i == from || data[i-1] == ' ' || data[i-1] == '\t') {
				mark(i, to)
				break
			}
		}
		for i := from; i < to; i++ {
			if data[i] == '\t' && !allowed[i] {
				col := utf8.RuneCount(data[from:i]) + 1
				return &Error{Line: l + 1, Column: col,
					Msg: "while scanning for the next token: found character '\\t' that cannot start any token"}
			}
		}
	}
	return nil
}

func indentOf(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// quotedEnd returns the offset just past the closing quote of the quoted
// scalar that starts at or after start.
func quotedEnd(data []byte, start int, q byte) int {
	i := start
	for i < len(data) && data[i] != q {
		i++
	}
	for i++; i < len(data); i++ {
		switch {
		case q == '"' && data[i] == '\\':
			i++
		case data[i] == q:
			if q == '\'' && i+1 < len(data) && data[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(data)
}
