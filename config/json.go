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
			switch p.Key.Kind { // json.dumps turns a key into a string so
			case pyyaml.Str:
				quote(p.Key.Str)
			case pyyaml.Bool:
				quote(strconv.FormatBool(p.Key.Bool))
			case pyyaml.Null:
				quote("null")
			default:
				var k strings.Builder
				writeJSON(&k, p.Key)
				quote(strings.Trim(k.String(), `"`))
			}
			b.WriteString(": ")
			writeJSON(b, p.Value)
		}
		b.WriteByte('}')
	default: // str, bytes, timestamps
		quote(v.Str)
	}
}
