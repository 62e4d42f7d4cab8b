package config

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// Opt is a setting that may be absent from a recipe; Set says whether it
// was written (with a value of the expected type).
type Opt[T any] struct {
	V   T
	Set bool
}

// Or is the value when set, else def (the generator's default).
func (o Opt[T]) Or(def T) T {
	if o.Set {
		return o.V
	}
	return def
}

// Scenario is one scenario of a recipe: its name and its items.
type Scenario struct {
	Name  string
	Items []Item
}

// Item is one item of a scenario's list: its sequence lengths (or its
// agentic settings) and its search space.
type Item struct {
	// Path is the item's field path ("scenarios.fixed-seq-len[0]", or
	// "seq-len-configs[0]" in the older layout), Line its line.
	Path     string
	Line     int
	ISL, OSL int64 // 0 when absent
	// DRAMUtilization is the agentic dram-utilization (0 when absent).
	DRAMUtilization float64
	// Duration is the agentic duration: in seconds (the generator read
	// it until #2005).
	Duration Opt[int64]
	Entries  []Entry
}

// Entry is one search-space entry of an item: a curve's parallelism,
// spec decoding and KV offloading, and its concurrencies. A multi-node
// entry sets its parallelism per side (Prefill, Decode).
type Entry struct {
	// Path is the entry's field path (Item.Path + ".search-space[j]").
	Path string
	Line int
	// TP, EP, PP, DCP and PCP are tp, ep, pp, dcp-size and pcp-size.
	TP, EP, PP, DCP, PCP Opt[int64]
	DPAttn               Opt[bool] // dp-attn, as Python reads its truth
	Spec                 Opt[string]
	KVOffloading         Opt[string]
	KVBackend            string // kv-offload-backend's name ("" when absent)
	// LegacyOffloading: the entry said `offloading:` (none, cpu, ssd), as
	// agentic rows did before kv-offloading (#1201 to #1992); the workflow
	// of that era gave it to the point as OFFLOADING
	LegacyOffloading bool
	// Conc is the concurrencies the generator expands the entry to
	// (see expandConc).
	Conc            []int64
	Prefill, Decode *Side
	// Components are the entry's optional component metadata as JSON,
	// keys in their order, by field (kv-offload-backend, router,
	// kv-p2p-transfer): what the generator copies into a point and the
	// workflow passes on (KV_OFFLOAD_BACKEND_METADATA, ROUTER_METADATA).
	Components map[string]string
}

// componentFields are the entry fields kept as Components.
var componentFields = []string{"kv-offload-backend", "router", "kv-p2p-transfer"}

// Side is one worker side of a multi-node entry.
type Side struct {
	Workers, TP, EP Opt[int64] // num-worker, tp, ep
	PP, DCP, PCP    Opt[int64] // pp, dcp-size, pcp-size
	DPAttn          Opt[bool]
	// Settings are its additional-settings as written (KEY=VALUE).
	Settings []string
}

// Sides are the entry's multi-node sides in order (prefill, decode);
// none for a single-node entry.
func (e *Entry) Sides() []*Side {
	var out []*Side
	for _, s := range []*Side{e.Prefill, e.Decode} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Settings are the entry's multi-node additional-settings as the
// workflow exports them: KEY=VALUE, prefill's then decode's (decode wins).
func (e *Entry) Settings() map[string]string {
	out := map[string]string{}
	for _, s := range e.Sides() {
		for _, kv := range s.Settings {
			if k, v, ok := strings.Cut(kv, "="); ok {
				out[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// Scenarios lists the recipe's scenarios in file order, in either layout
// of the history: `scenarios: {fixed-seq-len: [...], agentic-coding:
// [...]}`, or the older `seq-len-configs: [...]`, which is fixed-seq-len.
func (r *Recipe) Scenarios() []Scenario { return scenarios(r.v) }

// Rows lists the recipe's search-space entries in file order.
func (r *Recipe) Rows() []Row {
	var out []Row
	for _, sc := range r.Scenarios() {
		for _, it := range sc.Items {
			for i := range it.Entries {
				out = append(out, rowOf(sc.Name, &it, &it.Entries[i]))
			}
		}
	}
	return out
}

// RowAt is the row of the search-space entry that holds the field path.
func (r *Recipe) RowAt(path string) (Row, bool) {
	for _, row := range r.Rows() {
		if HasPathPrefix(path, row.Path) {
			return row, true
		}
	}
	return Row{}, false
}

// CanonicalPath is a field path in today's layout: the older
// `seq-len-configs[i]...` is `scenarios.fixed-seq-len[i]...` (the same
// field, moved by the schema change), so that a history reads in one
// vocabulary across it.
func CanonicalPath(p string) string {
	const old, now = "seq-len-configs", "scenarios.fixed-seq-len"
	if HasPathPrefix(p, old) {
		return now + p[len(old):]
	}
	return p
}

func scenarios(v *pyyaml.Value) []Scenario {
	if sc, _ := v.Get("scenarios"); sc != nil && sc.Kind == pyyaml.Map {
		var out []Scenario
		for _, p := range sc.Pairs {
			if p.Key.Kind == pyyaml.Str && p.Value.Kind == pyyaml.Seq {
				out = append(out, scenarioOf(p.Key.Str, joinKey("scenarios", p.Key), p.Value))
			}
		}
		return out
	}
	if l, _ := v.Get("seq-len-configs"); l != nil && l.Kind == pyyaml.Seq {
		return []Scenario{scenarioOf("fixed-seq-len", "seq-len-configs", l)}
	}
	return nil
}

func scenarioOf(name, path string, l *pyyaml.Value) Scenario {
	sc := Scenario{Name: name}
	for i, iv := range l.Items {
		it := Item{Path: path + "[" + strconv.Itoa(i) + "]", Line: iv.Line,
			ISL: optInt(iv, "isl").V, OSL: optInt(iv, "osl").V}
		if u, ok := iv.Get("dram-utilization"); ok {
			it.DRAMUtilization = number(u)
		}
		it.Duration = optInt(iv, "duration")
		if ss, _ := iv.Get("search-space"); ss != nil && ss.Kind == pyyaml.Seq {
			for j, ev := range ss.Items {
				it.Entries = append(it.Entries, entryOf(it.Path+".search-space["+strconv.Itoa(j)+"]", ev))
			}
		}
		sc.Items = append(sc.Items, it)
	}
	return sc
}

func entryOf(path string, v *pyyaml.Value) Entry {
	e := Entry{Path: path, Line: v.Line, TP: optInt(v, "tp"), EP: optInt(v, "ep"), PP: optInt(v, "pp"),
		DCP: optInt(v, "dcp-size"), PCP: optInt(v, "pcp-size"), DPAttn: optTruth(v, "dp-attn"),
		Spec: optStr(v, "spec-decoding"), KVOffloading: optStr(v, "kv-offloading"), Conc: expandConc(v)}
	if !e.KVOffloading.Set {
		if o := optStr(v, "offloading"); o.Set {
			e.KVOffloading, e.LegacyOffloading = o, true
		}
	}
	for _, f := range componentFields {
		if x, ok := v.Get(f); ok {
			if e.Components == nil {
				e.Components = map[string]string{}
			}
			e.Components[f] = pyyaml.JSON(x)
		}
	}
	if b, ok := v.Get("kv-offload-backend"); ok {
		e.KVBackend = optStr(b, "name").V
		if b.Kind == pyyaml.Str { // before #2096: the name alone
			e.KVBackend = b.Str
		}
	}
	if p, ok := v.Get("prefill"); ok {
		e.Prefill = sideOf(p)
		if d, ok := v.Get("decode"); ok {
			e.Decode = sideOf(d)
		}
	} else if d, ok := v.Get("decode"); ok {
		e.Decode = sideOf(d)
	}
	return e
}

func sideOf(v *pyyaml.Value) *Side {
	s := &Side{Workers: optInt(v, "num-worker"), TP: optInt(v, "tp"), EP: optInt(v, "ep"), PP: optInt(v, "pp"),
		DCP: optInt(v, "dcp-size"), PCP: optInt(v, "pcp-size"), DPAttn: optTruth(v, "dp-attn")}
	if as, ok := v.Get("additional-settings"); ok {
		for _, it := range as.Items {
			if it.Kind == pyyaml.Str {
				s.Settings = append(s.Settings, it.Str)
			}
		}
	}
	return s
}

func optInt(v *pyyaml.Value, f string) Opt[int64] {
	if x, ok := v.Get(f); ok && x.Kind == pyyaml.Int && x.Int.IsInt64() {
		return Opt[int64]{x.Int.Int64(), true}
	}
	return Opt[int64]{}
}

func optStr(v *pyyaml.Value, f string) Opt[string] {
	if x, ok := v.Get(f); ok && x.Kind == pyyaml.Str {
		return Opt[string]{x.Str, true}
	}
	return Opt[string]{}
}

func optTruth(v *pyyaml.Value, f string) Opt[bool] {
	if x, ok := v.Get(f); ok {
		return Opt[bool]{x.Truthy(), true}
	}
	return Opt[bool]{}
}

func number(v *pyyaml.Value) float64 {
	switch v.Kind {
	case pyyaml.Float:
		return v.Float
	case pyyaml.Int:
		f, _ := new(big.Float).SetInt(v.Int).Float64()
		return f
	}
	return 0
}
