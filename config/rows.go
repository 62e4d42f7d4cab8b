package config

import (
	"github.com/perflog/perflog/internal/pyyaml"
)

// Row is one search-space entry of a recipe with what it benchmarks: the
// scenario and sequence lengths around it, its parallelism (for a
// multi-node entry, its prefill and decode workers'), spec decoding, KV
// offload and the concurrencies it generates. Claims about a recipe
// ("TP4/EP4 conc 64-256 on 8k1k") are checked row by row.
type Row struct {
	Scenario string // fixed-seq-len, agentic-coding
	ISL, OSL int64  // 0 when the scenario has none
	// TP, EP and DPA hold one value for a single-node entry and the
	// prefill then decode values of a multi-node one.
	TP, EP []int64
	DPA    []bool
	Spec   string // spec-decoding ("none" when absent)
	// KVOffloading is the kv-offloading mode ("" when absent), KVBackend
	// the kv-offload-backend name.
	KVOffloading, KVBackend string
	Conc                    []int64
	Line                    int // the entry's line in its master config
}

// HasTP reports whether the row runs with tensor parallelism n (any side).
func (r Row) HasTP(n int64) bool { return hasInt(r.TP, n) }

// HasEP reports whether the row runs with expert parallelism n (any side).
func (r Row) HasEP(n int64) bool { return hasInt(r.EP, n) }

// HasDPA reports whether data-parallel attention is v on some side.
func (r Row) HasDPA(v bool) bool {
	for _, d := range r.DPA {
		if d == v {
			return true
		}
	}
	return len(r.DPA) == 0 && !v
}

// HasConc reports whether the row generates concurrency c.
func (r Row) HasConc(c int64) bool { return hasInt(r.Conc, c) }

func hasInt(l []int64, n int64) bool {
	for _, x := range l {
		if x == n {
			return true
		}
	}
	return false
}

// Scenario is one scenario of a recipe: its name and its items (each with
// isl/osl or other settings and a search-space list).
type Scenario struct {
	Name  string
	Items []*pyyaml.Value
}

// Scenarios lists a recipe's scenarios in file order, in either layout of
// the history: `scenarios: {fixed-seq-len: [...], agentic-coding: [...]}`,
// or the older `seq-len-configs: [...]`, which is fixed-seq-len.
func Scenarios(recipe *pyyaml.Value) []Scenario {
	if sc, _ := recipe.Get("scenarios"); sc != nil && sc.Kind == pyyaml.Map {
		var out []Scenario
		for _, p := range sc.Pairs {
			if p.Key.Kind == pyyaml.Str && p.Value.Kind == pyyaml.Seq {
				out = append(out, Scenario{Name: p.Key.Str, Items: p.Value.Items})
			}
		}
		return out
	}
	if l, _ := recipe.Get("seq-len-configs"); l != nil && l.Kind == pyyaml.Seq {
		return []Scenario{{Name: "fixed-seq-len", Items: l.Items}}
	}
	return nil
}

// Rows lists a recipe's search-space entries in file order.
func Rows(recipe *pyyaml.Value) []Row {
	var out []Row
	for _, sc := range Scenarios(recipe) {
		for _, item := range sc.Items {
			ss, _ := item.Get("search-space")
			if ss == nil || ss.Kind != pyyaml.Seq {
				continue
			}
			for _, e := range ss.Items {
				out = append(out, RowOf(sc.Name, item, e))
			}
		}
	}
	return out
}

// RowOf is the row of one search-space entry e of a scenario's item.
func RowOf(scenario string, item, e *pyyaml.Value) Row {
	r := Row{Scenario: scenario, ISL: intField(item, "isl"), OSL: intField(item, "osl"), Spec: "none", Conc: ExpandConc(e), Line: e.Line}
	if v, ok := e.Get("spec-decoding"); ok && v.Kind == pyyaml.Str {
		r.Spec = v.Str
	}
	if v, ok := e.Get("kv-offloading"); ok && v.Kind == pyyaml.Str {
		r.KVOffloading = v.Str
	}
	if v, ok := e.Get("kv-offload-backend"); ok {
		if n, ok := v.Get("name"); ok && n.Kind == pyyaml.Str {
			r.KVBackend = n.Str
		}
	}
	sides := []*pyyaml.Value{e}
	if pf, ok := e.Get("prefill"); ok {
		sides = []*pyyaml.Value{pf}
		if d, ok := e.Get("decode"); ok {
			sides = append(sides, d)
		}
	}
	for _, s := range sides {
		if v, ok := s.Get("tp"); ok && v.Kind == pyyaml.Int && v.Int.IsInt64() {
			r.TP = append(r.TP, v.Int.Int64())
		}
		if v, ok := s.Get("ep"); ok && v.Kind == pyyaml.Int && v.Int.IsInt64() {
			r.EP = append(r.EP, v.Int.Int64())
		}
		if v, ok := s.Get("dp-attn"); ok {
			r.DPA = append(r.DPA, v.Truthy())
		}
	}
	return r
}

func intField(v *pyyaml.Value, f string) int64 {
	if x, ok := v.Get(f); ok && x.Kind == pyyaml.Int && x.Int.IsInt64() {
		return x.Int.Int64()
	}
	return 0
}
