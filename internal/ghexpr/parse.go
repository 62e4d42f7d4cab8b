package ghexpr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp // ! == != < <= > >= && || ( ) [ ] . ,
)

type token struct {
	kind tokKind
	text string // the identifier, the string's value, the number's text or the operator
}

// parser evaluates while it parses: an expression is small and is
// evaluated once, so there is no tree. skip > 0 parses without
// evaluating (the operand a short circuit passes over).
type parser struct {
	src   string
	pos   int
	tok   token
	err   error
	ctx   Context
	skip  int
	depth int // nesting of parentheses, calls and indexes (maxDepth)
}

// maxDepth bounds an expression's nesting: a workflow file is a
// stranger's text, and a deep one would exhaust the stack.
const maxDepth = 64

func (p *parser) fail(format string, a ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("expression %q: %s", p.src, fmt.Sprintf(format, a...))
	}
}

func (p *parser) next() {
	s := p.src
	for p.pos < len(s) && strings.IndexByte(" \t\r\n", s[p.pos]) >= 0 {
		p.pos++
	}
	if p.pos >= len(s) {
		p.tok = token{kind: tEOF}
		return
	}
	c := s[p.pos]
	switch {
	case c == '\'':
		var b strings.Builder
		i := p.pos + 1
		for {
			if i >= len(s) {
				p.fail("a string without its closing quote")
				p.tok = token{kind: tEOF}
				p.pos = len(s)
				return
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			b.WriteByte(s[i])
			i++
		}
		p.tok, p.pos = token{kind: tString, text: b.String()}, i+1
	case c >= '0' && c <= '9' || c == '-' && p.pos+1 < len(s) && s[p.pos+1] >= '0' && s[p.pos+1] <= '9':
		i := p.pos + 1
		for i < len(s) && (isIdent(s[i]) || s[i] == '.' || s[i] == '+' && (s[i-1] == 'e' || s[i-1] == 'E')) {
			i++
		}
		p.tok, p.pos = token{kind: tNumber, text: s[p.pos:i]}, i
	case isIdentStart(c):
		i := p.pos + 1
		for i < len(s) && (isIdent(s[i]) || s[i] == '-') {
			i++
		}
		p.tok, p.pos = token{kind: tIdent, text: s[p.pos:i]}, i
	default:
		for _, op := range []string{"==", "!=", "<=", ">=", "&&", "||", "!", "<", ">", "(", ")", "[", "]", ".", ",", "*"} {
			if strings.HasPrefix(s[p.pos:], op) {
				p.tok, p.pos = token{kind: tOp, text: op}, p.pos+len(op)
				return
			}
		}
		p.fail("unexpected %q", string(c))
		p.tok, p.pos = token{kind: tEOF}, len(s)
	}
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }

func (p *parser) is(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) expect(op string) {
	if !p.is(op) {
		p.fail("%q expected, not %q", op, p.tok.text)
		return
	}
	p.next()
}

// or: and ('||' and)*; a || b is a when a is truthy, else b.
func (p *parser) or() (any, error) {
	return p.chain("||", p.and, true), p.err
}

// and: cmp ('&&' cmp)*; a && b is a when a is falsy, else b.
func (p *parser) and() any {
	return p.chain("&&", p.cmp, false)
}

// chain reads operands joined by op: an operand whose truth is decides
// the chain, and what follows it is read but not evaluated (skip); an
// unknown operand stays the value (what it would decide is not known).
func (p *parser) chain(op string, operand func() any, decides bool) any {
	v := operand()
	for p.is(op) && p.err == nil {
		p.next()
		decided := p.skip == 0 && isKnown(v) && Truthy(v) == decides
		if decided {
			p.skip++
		}
		w := operand()
		if decided {
			p.skip--
			continue
		}
		if _, unk := v.(Unknown); unk {
			continue
		}
		v = w
	}
	return v
}

func isKnown(v any) bool { _, u := v.(Unknown); return !u }

func (p *parser) cmp() any {
	v := p.unary()
	for p.tok.kind == tOp && p.err == nil {
		op := p.tok.text
		switch op {
		case "==", "!=", "<", "<=", ">", ">=":
		default:
			return v
		}
		p.next()
		w := p.unary()
		if u, ok := v.(Unknown); ok {
			v = u
			continue
		}
		if u, ok := w.(Unknown); ok {
			v = u
			continue
		}
		switch op {
		case "==":
			v = equal(v, w)
		case "!=":
			v = !equal(v, w)
		default:
			c, ok := compare(v, w)
			switch op {
			case "<":
				v = ok && c < 0
			case "<=":
				v = ok && c <= 0
			case ">":
				v = ok && c > 0
			case ">=":
				v = ok && c >= 0
			}
		}
	}
	return v
}

func (p *parser) unary() any {
	if p.is("!") {
		p.next()
		if p.depth >= maxDepth {
			p.fail("nested deeper than %d", maxDepth)
			return nil
		}
		p.depth++
		v := p.unary()
		p.depth--
		if u, ok := v.(Unknown); ok {
			return u
		}
		return !Truthy(v)
	}
	return p.postfix()
}

func (p *parser) postfix() any {
	v := p.primary()
	for p.err == nil {
		switch {
		case p.is("."):
			p.next()
			if p.is("*") { // an object filter: the values, as a filtered array
				p.next()
				v = filter(v)
				continue
			}
			if p.tok.kind != tIdent {
				p.fail("a property name expected after '.'")
				return nil
			}
			name := p.tok.text
			p.next()
			v = property(v, name)
		case p.is("["):
			p.next()
			k := p.or1()
			p.expect("]")
			v = index(v, k)
		default:
			return v
		}
	}
	return v
}

// or1 parses a nested expression (a parenthesis, an index, an argument).
func (p *parser) or1() any {
	if p.depth >= maxDepth {
		p.fail("nested deeper than %d", maxDepth)
		p.tok, p.pos = token{kind: tEOF}, len(p.src)
		return nil
	}
	p.depth++
	v, _ := p.or()
	p.depth--
	return v
}

// filtered is the array an object filter (`.*`) makes: a property of
// it is that property of each element (`labels.*.name`).
type filtered []any

func filter(v any) any {
	switch x := v.(type) {
	case Unknown:
		return Unknown{Name: x.Name + ".*"}
	case *Object:
		out := make(filtered, 0, len(x.Keys))
		for _, k := range x.Keys {
			out = append(out, x.Vals[k])
		}
		return out
	case []any:
		return filtered(x)
	case filtered:
		var out filtered
		for _, e := range x {
			if f, ok := filter(e).(filtered); ok {
				out = append(out, f...)
			}
		}
		return out
	}
	return filtered{}
}

func property(v any, name string) any {
	switch x := v.(type) {
	case filtered:
		var out filtered
		for _, e := range x {
			if _, ok := e.(*Object); ok {
				out = append(out, property(e, name))
			}
		}
		return out
	case Unknown:
		return Unknown{Name: x.Name + "." + name}
	case Lookup:
		return x(name)
	case *Object:
		for _, k := range x.Keys { // property names are case-insensitive
			if strings.EqualFold(k, name) {
				return x.Vals[k]
			}
		}
	}
	return nil
}

func index(v, k any) any {
	if u, ok := v.(Unknown); ok {
		return Unknown{Name: u.Name + "[" + String(k) + "]"}
	}
	if u, ok := k.(Unknown); ok {
		return u
	}
	switch x := v.(type) {
	case *Object, Lookup:
		if s, ok := k.(string); ok {
			return property(x, s)
		}
	case []any:
		if f, ok := k.(float64); ok && f >= 0 && int(f) < len(x) && float64(int(f)) == f {
			return x[int(f)]
		}
	}
	return nil
}

func (p *parser) primary() any {
	t := p.tok
	switch t.kind {
	case tString:
		p.next()
		return t.text
	case tNumber:
		p.next()
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			if n, err2 := strconv.ParseInt(strings.TrimPrefix(t.text, "0x"), 16, 64); err2 == nil && strings.HasPrefix(t.text, "0x") {
				return float64(n)
			}
			p.fail("bad number %q", t.text)
		}
		return f
	case tIdent:
		p.next()
		switch strings.ToLower(t.text) {
		case "true":
			return true
		case "false":
			return false
		case "null":
			return nil
		}
		if p.is("(") {
			return p.call(t.text)
		}
		if p.skip > 0 {
			return nil
		}
		if p.ctx != nil {
			if v, ok := p.ctx(t.text); ok {
				return v
			}
		}
		return Unknown{Name: t.text}
	case tOp:
		if t.text == "(" {
			p.next()
			v := p.or1()
			p.expect(")")
			return v
		}
	}
	p.fail("unexpected %q", t.text)
	p.next()
	return nil
}

func (p *parser) call(name string) any {
	p.expect("(")
	var args []any
	for !p.is(")") && p.err == nil {
		args = append(args, p.or1())
		if !p.is(",") {
			break
		}
		p.next()
	}
	p.expect(")")
	if p.skip > 0 || p.err != nil {
		return nil
	}
	for _, a := range args {
		if u, ok := a.(Unknown); ok {
			return u
		}
	}
	arity := func(lo, hi int) bool {
		if len(args) < lo || len(args) > hi {
			p.fail("%s takes %d to %d arguments, not %d", name, lo, hi, len(args))
			return false
		}
		return true
	}
	switch strings.ToLower(name) {
	case "format":
		if !arity(1, 64) {
			return nil
		}
		return format(String(args[0]), args[1:])
	case "tojson":
		if !arity(1, 1) {
			return nil
		}
		return ToJSON(args[0])
	case "fromjson":
		if !arity(1, 1) {
			return nil
		}
		v, err := FromJSON(String(args[0]))
		if err != nil {
			p.fail("fromJSON: %v", err)
		}
		return v
	case "contains":
		if !arity(2, 2) {
			return nil
		}
		if f, ok := args[0].(filtered); ok {
			args[0] = []any(f)
		}
		if list, ok := args[0].([]any); ok {
			for _, e := range list {
				if equal(e, args[1]) {
					return true
				}
			}
			return false
		}
		return strings.Contains(strings.ToLower(String(args[0])), strings.ToLower(String(args[1])))
	case "startswith":
		if !arity(2, 2) {
			return nil
		}
		return strings.HasPrefix(strings.ToLower(String(args[0])), strings.ToLower(String(args[1])))
	case "endswith":
		if !arity(2, 2) {
			return nil
		}
		return strings.HasSuffix(strings.ToLower(String(args[0])), strings.ToLower(String(args[1])))
	case "join":
		if !arity(1, 2) {
			return nil
		}
		sep := ","
		if len(args) == 2 {
			sep = String(args[1])
		}
		if f, ok := args[0].(filtered); ok {
			args[0] = []any(f)
		}
		list, ok := args[0].([]any)
		if !ok {
			return String(args[0])
		}
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = String(e)
		}
		return strings.Join(parts, sep)
	}
	// always(), success(), hashFiles(), ...: what a run knows, not a
	// reading of the files
	return Unknown{Name: name + "()"}
}

// format is format(s, args...): {N} is argument N, {{ and }} are braces.
func format(s string, args []any) any {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "{{"):
			b.WriteByte('{')
			i++
		case strings.HasPrefix(s[i:], "}}"):
			b.WriteByte('}')
			i++
		case s[i] == '{':
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			n, err := strconv.Atoi(s[i+1 : i+j])
			if err != nil || n < 0 || n >= len(args) {
				b.WriteString(s[i : i+j+1])
			} else {
				b.WriteString(String(args[n]))
			}
			i += j
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// FromJSON parses JSON into Values (objects keep their keys' order).
func FromJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := decodeJSON(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("text after the JSON value")
	}
	return v, nil
}

func decodeJSON(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			o := &Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", x)
	case json.Number:
		f, err := x.Float64()
		return f, err
	default:
		return x, nil // string, bool, nil
	}
}
