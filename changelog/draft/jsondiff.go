package draft

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxJSONDetail bounds the leaves a JSON value's change is said by: more
// is a rewrite, said as a change of the option alone.
const maxJSONDetail = 3

// jsonDetail says what changed inside an option's JSON value, leaf by
// leaf ("kv_connector_extra_config.cpu_bytes_to_use_per_rank from
// 299875000000 to 356125000000"): an option such as --kv-transfer-config
// is a document, and "Change --kv-transfer-config" tells a reader nothing.
// ok is false when a or b is not a JSON object, or when more than
// maxJSONDetail leaves changed.
func jsonDetail(a, b string) (string, bool) {
	x, y := jsonObject(a), jsonObject(b)
	if x == nil || y == nil {
		return "", false
	}
	var out []string
	jsonLeaves("", x, y, &out)
	if len(out) == 0 || len(out) > maxJSONDetail {
		return "", false
	}
	return strings.Join(out, ", "), true
}

// jsonLeaves appends to out the changes from a to b below prefix, in key
// order.
func jsonLeaves(prefix string, a, b map[string]any, out *[]string) {
	keys := slices.Sorted(maps.Keys(a))
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		p := prefix + k
		va, inA := a[k]
		vb, inB := b[k]
		ma, objA := va.(map[string]any)
		mb, objB := vb.(map[string]any)
		switch {
		case !inA:
			*out = append(*out, fmt.Sprintf("add %s %s", p, jsonText(vb)))
		case !inB:
			*out = append(*out, "remove "+p)
		case objA && objB:
			jsonLeaves(p+".", ma, mb, out)
		case jsonText(va) != jsonText(vb):
			*out = append(*out, fmt.Sprintf("%s from %s to %s", p, jsonText(va), jsonText(vb)))
		}
		if len(*out) > maxJSONDetail {
			return
		}
	}
}

// jsonObject decodes s as a JSON object, numbers as written (a byte
// count above 2^53 stays exact); nil when s is not one.
func jsonObject(s string) map[string]any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil || d.More() {
		return nil
	}
	return m
}

// jsonText writes a decoded JSON value back compactly.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
