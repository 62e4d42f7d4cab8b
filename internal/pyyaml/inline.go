package pyyaml

// Inline constructs the value of one line of block YAML, the text after
// "key: " or "- ", without running the parser: the common shapes of a
// recipe line (a plain or quoted scalar, a flow list or mapping of those)
// are read directly, and ok is false for anything else, which the caller
// then loads with Load. Whatever Inline accepts, Load("k: "+text) gives the
// same value (a fuzz test holds it to that); it accepts only a subset:
//
//   - printable ASCII, no '#' (comments), no '\\', no tab;
//   - a plain scalar that does not begin with an indicator (a '-' followed
//     by a non-space may begin one), holds no ": ", does not end in ':',
//     and holds none of "[]{}" outside a flow collection;
//   - a quoted scalar with no escapes (a doubled single quote is refused);
//   - a flow sequence or mapping, nested at most a few levels, of such
//     scalars, with plain string keys, no duplicate keys, no empty or
//     trailing entries.
//
// Values get Line 1 and the column of their first character.
func Inline(text string) (*Value, bool) {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c > 0x7e || c == '#' || c == '\\' {
			return nil, false
		}
	}
	p := &inline{s: text}
	p.space()
	if p.i == len(p.s) {
		return &Value{Kind: Null, Line: 1, Column: 1}, true
	}
	var v *Value
	var ok bool
	switch p.s[p.i] {
	case '[', '{':
		v, ok = p.flow(0)
	case '"', '\'':
		v, ok = p.quoted()
	default:
		v, ok = p.blockPlain()
	}
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, false
	}
	return v, true
}

// inline is a cursor over the text of one line.
type inline struct {
	s string
	i int
}

// maxFlowDepth bounds the nesting Inline reads (deeper is left to Load).
const maxFlowDepth = 8

func (p *inline) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *inline) at(col int, v *Value) *Value {
	v.Line, v.Column = 1, col+1
	return v
}

// plainStart reports whether a plain scalar may begin at s[i].
func plainStart(s string, i int) bool {
	switch c := s[i]; c {
	case '-':
		return i+1 < len(s) && s[i+1] != ' ' && !isFlowIndicator(s[i+1])
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

func isFlowIndicator(c byte) bool {
	return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'
}

// resolved constructs a plain scalar by PyYAML's implicit resolvers.
func (p *inline) resolved(start int, tok string) (*Value, bool) {
	v, err := scalar(Resolve(tok), tok)
	if err != nil {
		return nil, false
	}
	return p.at(start, v), true
}

// blockPlain reads a plain scalar to the end of the line.
func (p *inline) blockPlain() (*Value, bool) {
	start := p.i
	if !plainStart(p.s, start) {
		return nil, false
	}
	end := len(p.s)
	for end > start && p.s[end-1] == ' ' {
		end--
	}
	tok := p.s[start:end]
	for j := 0; j < len(tok); j++ {
		switch tok[j] {
		case ':':
			if j+1 == len(tok) || tok[j+1] == ' ' {
				return nil, false
			}
		case '[', ']', '{', '}':
			return nil, false
		}
	}
	p.i = len(p.s)
	return p.resolved(start, tok)
}

// quoted reads a single- or double-quoted scalar without escapes.
func (p *inline) quoted() (*Value, bool) {
	start := p.i
	q := p.s[start]
	j := start + 1
	for j < len(p.s) && p.s[j] != q {
		j++
	}
	if j == len(p.s) || (q == '\'' && j+1 < len(p.s) && p.s[j+1] == '\'') {
		return nil, false
	}
	p.i = j + 1
	return p.at(start, &Value{Kind: Str, Str: p.s[start+1 : j]}), true
}

// flowPlain reads a plain scalar inside a flow collection, up to the next
// ',', ']' or '}' (or ": " when key is set).
func (p *inline) flowPlain(key bool) (tok string, start int, ok bool) {
	start = p.i
	if p.i == len(p.s) || !plainStart(p.s, start) {
		return "", start, false
	}
	j := start
	for j < len(p.s) {
		c := p.s[j]
		if isFlowIndicator(c) {
			break
		}
		if c == ':' {
			if key && j+1 < len(p.s) && p.s[j+1] == ' ' {
				break
			}
			return "", start, false
		}
		if c == '"' || c == '\'' || c == '?' {
			return "", start, false
		}
		j++
	}
	end := j
	for end > start && p.s[end-1] == ' ' {
		end--
	}
	p.i = j
	return p.s[start:end], start, end > start
}

// flowNode reads one value inside a flow collection.
func (p *inline) flowNode(depth int) (*Value, bool) {
	p.space()
	if p.i == len(p.s) {
		return nil, false
	}
	switch p.s[p.i] {
	case '[', '{':
		return p.flow(depth + 1)
	case '"', '\'':
		return p.quoted()
	}
	tok, start, ok := p.flowPlain(false)
	if !ok {
		return nil, false
	}
	return p.resolved(start, tok)
}

// flow reads a flow sequence or mapping.
func (p *inline) flow(depth int) (*Value, bool) {
	if depth >= maxFlowDepth {
		return nil, false
	}
	start := p.i
	open := p.s[p.i]
	closing := byte(']')
	v := &Value{Kind: Seq}
	if open == '{' {
		closing = '}'
		v.Kind = Map
	}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == closing {
		p.i++
		return p.at(start, v), true
	}
	for {
		p.space()
		if v.Kind == Map {
			tok, kstart, ok := p.flowPlain(true)
			if !ok || Resolve(tok) != "!!str" || p.i+1 >= len(p.s) || p.s[p.i] != ':' {
				return nil, false
			}
			if _, dup := v.Get(tok); dup {
				return nil, false
			}
			p.i++ // ':'
			val, ok := p.flowNode(depth)
			if !ok {
				return nil, false
			}
			v.Pairs = append(v.Pairs, Pair{Key: p.at(kstart, &Value{Kind: Str, Str: tok}), Value: val})
		} else {
			item, ok := p.flowNode(depth)
			if !ok {
				return nil, false
			}
			v.Items = append(v.Items, item)
		}
		p.space()
		if p.i == len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case closing:
			p.i++
			return p.at(start, v), true
		case ',':
			p.i++
		default:
			return nil, false
		}
	}
}
