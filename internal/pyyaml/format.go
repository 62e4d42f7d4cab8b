package pyyaml

// What the domain packages show of a loaded value: its YAML flow
// rendering, a canonical form for Python equality, and the JSON that
// json.dumps writes of it.

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Render writes a value in YAML flow style: plain scalars where YAML would
// read them back as the same string, double quotes otherwise.
func Render(v *Value) string {
	var b strings.Builder
	render(&b, v)
	return b.String()
}

func render(b *strings.Builder, v *Value) {
	if v == nil {
		b.WriteString("null")
		return
	}
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Int:
		b.WriteString(v.Int.String())
	case Float:
		b.WriteString(v.Repr())
	case Str:
		if plainSafe(v.Str) {
			b.WriteString(v.Str)
		} else {
			b.WriteString(strconv.Quote(v.Str))
		}
	case Seq, Set, Map:
		writeCollection(b, v, func(x *Value) { render(b, x) }, func(k *Value) { render(b, k) })
	default:
		b.WriteString(v.Repr())
	}
}

// writeCollection writes a sequence ("[a, b]") or a mapping ("{k: v}") in
// flow style, each item by item and each mapping key by key.
func writeCollection(b *strings.Builder, v *Value, item, key func(*Value)) {
	open, close := byte('['), byte(']')
	n := len(v.Items)
	if v.Kind == Map {
		open, close, n = '{', '}', len(v.Pairs)
	}
	b.WriteByte(open)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		if v.Kind != Map {
			item(v.Items[i])
			continue
		}
		key(v.Pairs[i].Key)
		b.WriteString(": ")
		item(v.Pairs[i].Value)
	}
	b.WriteByte(close)
}

func plainSafe(s string) bool {
	if s == "" || s != strings.TrimSpace(s) || Resolve(s) != "!!str" {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return len(s) > 1 && (s[0] == '-' || s[0] == '?' || s[0] == ':') && s[1] != ' ' && !strings.ContainsAny(s, ",[]{}#")
	}
	return !strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.ContainsAny(s, ",[]{}\n\t")
}

// Canonical renders a value so that Python-equal values render equally:
// mapping keys and set items sorted, and bool, int and float compared by
// number (True == 1 == 1.0), as dict and list equality do in the incumbent.
func Canonical(v *Value) string {
	if v == nil {
		return "~"
	}
	switch v.Kind {
	case Seq, Set:
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			parts[i] = Canonical(it)
		}
		if v.Kind == Set {
			sort.Strings(parts)
			return "{" + strings.Join(parts, ",") + "}"
		}
		return "[" + strings.Join(parts, ",") + "]"
	case Map:
		parts := make([]string, len(v.Pairs))
		for i, p := range v.Pairs {
			parts[i] = Canonical(p.Key) + ":" + Canonical(p.Value)
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ",") + "}"
	case Bool:
		if v.Bool {
			return "n1"
		}
		return "n0"
	case Int:
		return "n" + v.Int.String()
	case Float:
		if f := v.Float; f == math.Trunc(f) && math.Abs(f) < 1e18 {
			return "n" + strconv.FormatInt(int64(f), 10)
		}
		return "n" + v.Repr()
	case Str, Bytes, Timestamp:
		// length-prefixed: unambiguous without escaping
		return v.Kind.String() + ":" + strconv.Itoa(len(v.Str)) + ":" + v.Str
	}
	return v.Kind.String() + ":" + v.Repr()
}

// JSON is a YAML value as the generator's JSON output carries it
// (json.dumps of what PyYAML loaded): compact, mapping keys in their
// order, numbers as written by Python.
func JSON(v *Value) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v *Value) {
	if v == nil {
		b.WriteString("null")
		return
	}
	quote := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Int:
		b.WriteString(v.Int.String())
	case Float:
		switch r := v.Repr(); r { // Python's repr; json.dumps writes inf and nan so
		case "inf":
			b.WriteString("Infinity")
		case "-inf":
			b.WriteString("-Infinity")
		case "nan":
			b.WriteString("NaN")
		default:
			b.WriteString(r)
		}
	case Seq, Set, Map:
		writeCollection(b, v, func(x *Value) { writeJSON(b, x) }, func(k *Value) {
			switch k.Kind { // json.dumps turns a key into a string so
			case Str:
				quote(k.Str)
			case Bool:
				quote(strconv.FormatBool(k.Bool))
			case Null:
				quote("null")
			default:
				var s strings.Builder
				writeJSON(&s, k)
				quote(strings.Trim(s.String(), `"`))
			}
		})
	default: // str, bytes, timestamps
		quote(v.Str)
	}
}
