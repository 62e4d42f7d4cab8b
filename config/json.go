package config

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// JSON is a YAML value as the generator's JSON output carries it
// (json.dumps of what PyYAML loaded): compact, mapping keys in their
// order, numbers as written by Python.
func JSON(v *pyyaml.Value) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v *pyyaml.Value) {
	if v == nil {
		b.WriteString("null")
		return
	}
	quote := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	switch v.Kind {
	case pyyaml.Null:
		b.WriteString("null")
	case pyyaml.Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case pyyaml.Int:
		b.WriteString(v.Int.String())
	case pyyaml.Float:
		b.WriteString(v.Repr()) // Python's repr of a float; inf and nan as Python's json writes them
	case pyyaml.Seq, pyyaml.Set:
		b.WriteByte('[')
		for i, x := range v.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, x)
		}
		b.WriteByte(']')
	case pyyaml.Map:
		b.WriteByte('{')
		for i, p := range v.Pairs {
			if i > 0 {
				b.WriteString(", ")
			}
			if p.Key.Kind == pyyaml.Str {
				quote(p.Key.Str)
			} else {
				quote(p.Key.Repr())
			}
			b.WriteString(": ")
			writeJSON(b, p.Value)
		}
		b.WriteByte('}')
	default: // str, bytes, timestamps
		quote(v.Str)
	}
}
