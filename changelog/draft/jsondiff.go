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
	var out []jsonLeaf
	jsonLeaves("", x, y, &out, maxJSONDetail)
	if len(out) == 0 || len(out) > maxJSONDetail {
		return "", false
	}
	return strings.Join(leafTexts(out), ", "), true
}

// jsonDetailByPoint says what changed inside an option's JSON value
// whose values differ by point (pairs: each point's base and head
// values): the leaf changes every pair makes alike, then the paths that
// changed otherwise, "by point" ("cudagraph_mode from \"FULL_DECODE_ONLY\"
// to \"FULL_AND_PIECEWISE\", remove mode, cudagraph_capture_sizes by
// point"). ok is false as jsonDetail's is.
func jsonDetailByPoint(pairs [][2]string) (string, bool) {
	var paths []string
	texts := map[string]map[string]int{} // path: statement: pairs that make it
	for _, p := range pairs {
		x, y := jsonObject(p[0]), jsonObject(p[1])
		if x == nil || y == nil {
			return "", false
		}
		var ls []jsonLeaf
		jsonLeaves("", x, y, &ls, 4*maxJSONDetail)
		if len(ls) > 4*maxJSONDetail {
			return "", false
		}
		for _, l := range ls {
			if texts[l.path] == nil {
				texts[l.path] = map[string]int{}
				paths = append(paths, l.path)
			}
			texts[l.path][l.text]++
		}
	}
	var same, byPoint []string
	for _, p := range paths {
		if t := texts[p]; len(t) == 1 {
			for text, n := range t {
				if n == len(pairs) {
					same = append(same, text)
					continue
				}
				byPoint = append(byPoint, p+" by point")
			}
		} else {
			byPoint = append(byPoint, p+" by point")
		}
	}
	out := append(same, byPoint...)
	if len(out) == 0 || len(out) > maxJSONDetail {
		return "", false
	}
	return strings.Join(out, ", "), true
}

// jsonLeaf is one change inside a JSON value: its path, and the change
// said ("a.b from 1 to 2", "remove a.c", "add a.d 3").
type jsonLeaf struct{ path, text string }

func leafTexts(ls []jsonLeaf) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

// jsonLeaves appends to out the changes from a to b below prefix, in key
// order, stopping past max.
func jsonLeaves(prefix string, a, b map[string]any, out *[]jsonLeaf, max int) {
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
			*out = append(*out, jsonLeaf{p, fmt.Sprintf("add %s %s", p, jsonText(vb))})
		case !inB:
			*out = append(*out, jsonLeaf{p, "remove " + p})
		case objA && objB:
			jsonLeaves(p+".", ma, mb, out, max)
		case jsonText(va) != jsonText(vb):
			*out = append(*out, jsonLeaf{p, fmt.Sprintf("%s from %s to %s", p, jsonText(va), jsonText(vb))})
		}
		if len(*out) > max {
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
