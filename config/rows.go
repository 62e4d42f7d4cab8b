package config

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
	// PP, DCP and PCP are pp, dcp-size and pcp-size, one per side as TP's
	// sides are (0 where the side does not say).
	PP, DCP, PCP []int64
	// Workers are a multi-node entry's prefill then decode worker counts
	// (num-worker; 0 where the entry does not say), nil for a single-node
	// one.
	Workers []int64
	agg     bool   // the decode side says num-worker: 0 (Aggregated)
	Spec    string // spec-decoding ("none" when absent)
	// KVOffloading is the kv-offloading mode ("" when absent), KVBackend
	// the kv-offload-backend name.
	KVOffloading, KVBackend string
	Conc                    []int64
	// Line is the entry's line in its master config, Path its field path.
	Line int
	Path string
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

// rowOf is the row of one search-space entry e of a scenario's item.
func rowOf(scenario string, it *Item, e *Entry) Row {
	r := Row{Scenario: scenario, ISL: it.ISL, OSL: it.OSL, Spec: e.Spec.Or("none"), KVOffloading: e.KVOffloading.V,
		KVBackend: e.KVBackend, Conc: e.Conc, Line: e.Line, Path: e.Path}
	if e.Prefill == nil { // a decode side alone is not a multi-node row
		r.add(e.TP, e.EP, e.PP, e.DCP, e.PCP, e.DPAttn)
		return r
	}
	for _, s := range e.Sides() {
		r.add(s.TP, s.EP, s.PP, s.DCP, s.PCP, s.DPAttn)
		r.Workers = append(r.Workers, s.Workers.V)
	}
	r.agg = e.Decode != nil && e.Decode.Workers.Set && e.Decode.Workers.V == 0
	return r
}

// Aggregated reports whether the row is a multi-node entry with no
// decode workers (num-worker: 0): its prefill side is the aggregated
// server, as a recipe with disagg: false writes it.
func (r Row) Aggregated() bool { return r.agg }

func (r *Row) add(tp, ep, pp, dcp, pcp Opt[int64], dpa Opt[bool]) {
	if tp.Set {
		r.TP = append(r.TP, tp.V)
		r.PP = append(r.PP, pp.V)
		r.DCP = append(r.DCP, dcp.V)
		r.PCP = append(r.PCP, pcp.V)
	}
	if ep.Set {
		r.EP = append(r.EP, ep.V)
	}
	if dpa.Set {
		r.DPA = append(r.DPA, dpa.V)
	}
}
