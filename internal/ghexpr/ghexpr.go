// Package ghexpr evaluates GitHub Actions expressions (`${{ ... }}`) the
// way a workflow run does, over a context the caller gives: literals,
// property access (`inputs.tp`, `matrix.config['kv-offload-backend'].name`),
// `!`, comparisons, `&&` and `||` (which return an operand, not a
// boolean), and the functions format, toJSON, fromJSON, contains,
// startsWith, endsWith and join. A name the context does not know is an
// Unknown value that spreads through what uses it, so an answer is never
// a guess; `false && <unknown>` is still false.
//
// Values are nil, bool, float64, string, *Object, []any, Lookup and
// Unknown.
//
// Dependencies: the standard library only.
package ghexpr

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unknown is a value the context could not give (its name, for the
// reader: "github.sha").
type Unknown struct{ Name string }

// Object is a JSON-like object that keeps its keys' order (toJSON
// prints them in it, as GitHub does).
type Object struct {
	Keys []string
	Vals map[string]any
}

// Get is the value of key k, and whether the object has it.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.Vals[k]
	return v, ok
}

// Set sets key k, keeping the first place of a key set before.
func (o *Object) Set(k string, v any) {
	if o.Vals == nil {
		o.Vals = map[string]any{}
	}
	if _, ok := o.Vals[k]; !ok {
		o.Keys = append(o.Keys, k)
	}
	o.Vals[k] = v
}

// Lookup is an object whose properties are computed (a context that
// answers any name: secrets).
type Lookup func(name string) any

// Context gives the value of a top-level name (`inputs`, `matrix`,
// `secrets`, ...); ok false makes it Unknown.
type Context func(name string) (v any, ok bool)

// Eval evaluates one expression (without the `${{ }}`).
func Eval(expr string, ctx Context) (any, error) {
	p := &parser{src: expr, ctx: ctx}
	p.next()
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, fmt.Errorf("expression %q: unexpected %q", expr, p.tok.text)
	}
	return v, nil
}

// Interpolate replaces each `${{ expr }}` of s by its value as a
// string (String); unknown is true when one of them was Unknown, and
// those places then hold "<unknown:NAME>".
func Interpolate(s string, ctx Context) (out string, unknown bool, err error) {
	if !strings.Contains(s, "${{") {
		return s, false, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), unknown, nil
		}
		j := closing(s, i+3)
		if j < 0 {
			return "", false, fmt.Errorf("%q: `${{` without `}}`", s)
		}
		b.WriteString(s[:i])
		v, err := Eval(s[i+3:j], ctx)
		if err != nil {
			return "", false, err
		}
		if u, ok := v.(Unknown); ok {
			unknown = true
			b.WriteString("<unknown:" + u.Name + ">")
		} else {
			b.WriteString(String(v))
		}
		s = s[j+2:]
	}
}

// closing is the index of the `}}` that ends the expression starting at
// i, skipping string literals.
func closing(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == '\'':
			i++
			for i < len(s) {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						i += 2
						continue
					}
					break
				}
				i++
			}
			i++
		case strings.HasPrefix(s[i:], "}}"):
			return i
		default:
			i++
		}
	}
	return -1
}

// String is a value as GitHub writes it into a string: null is empty,
// booleans true/false, numbers without a needless fraction, objects
// and arrays as JSON.
func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatNumber(x)
	case string:
		return x
	case Unknown:
		return "<unknown:" + x.Name + ">"
	default:
		return ToJSON(v)
	}
}

func formatNumber(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "Infinity"
		}
		return "-Infinity"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ToJSON is toJSON(v): JSON indented by two spaces, object keys in
// their order.
func ToJSON(v any) string {
	var b bytes.Buffer
	writeJSON(&b, v, "")
	return b.String()
}

func writeJSON(b *bytes.Buffer, v any, indent string) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		b.WriteString(formatNumber(x))
	case string:
		q, _ := json.Marshal(x)
		b.Write(q)
	case Unknown:
		q, _ := json.Marshal("<unknown:" + x.Name + ">")
		b.Write(q)
	case *Object:
		if len(x.Keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range x.Keys {
			q, _ := json.Marshal(k)
			b.WriteString(indent + "  ")
			b.Write(q)
			b.WriteString(": ")
			writeJSON(b, x.Vals[k], indent+"  ")
			if i < len(x.Keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case filtered:
		writeJSON(b, []any(x), indent)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(indent + "  ")
			writeJSON(b, e, indent+"  ")
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.WriteString("null")
	}
}

// Truthy is GitHub's coercion to a boolean: null, false, 0, NaN and ""
// are false; everything else (objects, arrays) is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// number is GitHub's coercion to a number for comparisons.
func number(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0
		}
		if strings.HasPrefix(s, "0x") {
			if n, err := strconv.ParseInt(s[2:], 16, 64); err == nil {
				return float64(n)
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return math.NaN()
}

// equal is `==`: same type compared as is (strings ignoring case),
// different primitive types as numbers, objects and arrays by identity.
func equal(a, b any) bool {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.EqualFold(x, y)
		}
	case nil:
		if b == nil {
			return true
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	case float64:
		if y, ok := b.(float64); ok {
			return x == y
		}
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	case []any:
		return false
	}
	switch b.(type) {
	case *Object, []any:
		return false
	}
	return number(a) == number(b)
}

// compare orders a and b for <, <=, >, >= (c < 0, 0, > 0); ok false
// when they do not compare (NaN).
func compare(a, b any) (int, bool) {
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return cmp.Compare(strings.ToLower(x), strings.ToLower(y)), true
		}
	}
	x, y := number(a), number(b)
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, false
	}
	return cmp.Compare(x, y), true
}
