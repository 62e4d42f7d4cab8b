package draft

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe"
)

// TestGroupBullets: runs of one-setting bullets become one bullet, and
// the claims read every setting of it as the single bullets said it.
func TestGroupBullets(t *testing.T) {
	in := []string{"Update image from a to b", "Remove SGLANG_A", "Remove SGLANG_B_C", "Remove --enforce-eager",
		"Set X_ONE=1", "Set X_TWO=write_through", "Set X_THREE", "Add --dp-aware", "Add --enable-metrics", "Add --policy hash"}
	got := groupBullets(in)
	want := []string{"Update image from a to b", "Remove SGLANG_A and SGLANG_B_C", "Remove --enforce-eager",
		"Set X_ONE=1, X_TWO=write_through and X_THREE", "Add --dp-aware and --enable-metrics", "Add --policy hash"}
	if !slices.Equal(got, want) {
		t.Fatalf("groupBullets:\n got %q\nwant %q", got, want)
	}
	read := func(bullets []string) []string {
		var out []string
		for _, c := range claims.Extract(bullets) {
			if c.Kind == claims.KindEnv || c.Kind == claims.KindFlag {
				s := c.Name + "=" + c.Value
				if c.Negated {
					s = "!" + s
				}
				if !c.Asserts() {
					s += " (weak)"
				}
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return out
	}
	if a, b := read(in), read(got); !slices.Equal(a, b) {
		t.Errorf("the claims read differ:\n single %q\ngrouped %q", a, b)
	}
}

// TestByPointValues: a setting whose values differ by point says what
// they became, as a multiple of the concurrency when each is one.
func TestByPointValues(t *testing.T) {
	e := &recipe.Effect{}
	for i, c := range []int64{4, 8, 16} {
		e.Head = append(e.Head, recipe.PointLaunch{Point: recipe.LaunchPoint{Index: i + 1, Conc: c}})
	}
	for _, tc := range []struct {
		heads map[int]string
		bases map[string]bool
		want  string
	}{
		{map[int]string{1: "16", 2: "32", 3: "64"}, map[string]bool{"256": true}, " (4 × conc; was 256)"},
		{map[int]string{1: "2", 2: "4", 3: "8"}, nil, " (0.5 × conc)"},
		{map[int]string{1: "4", 2: "8", 3: "16"}, nil, " (= conc)"},
		{map[int]string{1: "16", 2: "32", 3: "32"}, map[string]bool{"8": true, "9": true}, " (now 16 or 32)"},
		{map[int]string{1: "0.8", 2: "0.85"}, map[string]bool{"0.9": true}, " (now 0.8 or 0.85; was 0.9)"},
		{map[int]string{1: "$X"}, nil, ""},
		{map[int]string{1: "16"}, nil, " (now 16)"}, // one concurrency says no multiple
	} {
		if got := byPointValues(e, tc.heads, tc.bases); got != tc.want {
			t.Errorf("byPointValues(%v, %v) = %q, want %q", tc.heads, tc.bases, got, tc.want)
		}
	}
	// the claims read no value of it: the points launch several
	for _, b := range []string{"Change --max-num-seqs by point (4 × conc; was 256)", "Change X_Y by point (now 16 or 32; was 8)"} {
		for _, c := range claims.Extract([]string{b}) {
			if c.Value != "" || c.Kind == claims.KindConc {
				t.Errorf("%q: the claims read %s %q=%q", b, c.Kind, c.Name, c.Value)
			}
		}
	}
}

// TestRowKeyDefaults: a row written with its defaults ("ep: 1,
// dp-attn: false") is the row written without them, so rewriting a row
// drafts no add and remove of it.
func TestRowKeyDefaults(t *testing.T) {
	a := config.Row{ISL: 8192, OSL: 1024, TP: []int64{8}}
	b := config.Row{ISL: 8192, OSL: 1024, TP: []int64{8}, EP: []int64{1}, DPA: []bool{false}, Spec: "none", KVOffloading: "none"}
	if rowKey(a) != rowKey(b) {
		t.Errorf("rowKey(%+v) = %q, rowKey(%+v) = %q", a, rowKey(a), b, rowKey(b))
	}
	c := b
	c.DPA = []bool{true}
	if rowKey(a) == rowKey(c) {
		t.Error("a DPA row has the key of a row without DP attention")
	}
	got := rowBullets([]config.Row{withConc(a, 1, 2, 4)}, []config.Row{withConc(b, 1, 2, 4)})
	if len(got) != 0 {
		t.Errorf("rowBullets of a rewritten row = %q, want none", got)
	}
}

func withConc(r config.Row, c ...int64) config.Row {
	r.Conc = c
	return r
}

// TestRowNameWorkers: a multi-node row names its worker counts, which
// tell 1P2D from 1P4D.
func TestRowNameWorkers(t *testing.T) {
	r := config.Row{TP: []int64{4, 4}, EP: []int64{4, 1}, DPA: []bool{true, false}, Workers: []int64{1, 2}, Conc: []int64{48}}
	if got, want := rowNameOf(r, nameParts{}), "1P2D prefill TP4/EP4 DPA, decode TP4"; got != want {
		t.Errorf("rowNameOf = %q, want %q", got, want)
	}
	other := r
	other.Workers = []int64{1, 4}
	if rowKey(r) == rowKey(other) {
		t.Error("1P2D and 1P4D rows share a key")
	}
	got := rowBullets(nil, []config.Row{r, other})
	if len(got) != 2 {
		t.Errorf("rowBullets = %q, want one bullet per worker layout", got)
	}
}

// TestSearchSpaceAggregated: an aggregated multi-node recipe is named by
// its one server (pipeline and context parallelism included), and the
// entries of one arm are said as one clause.
func TestSearchSpaceAggregated(t *testing.T) {
	text := `k:
  image: a
  multinode: true
  disagg: false
  scenarios:
    agentic-coding:
    - search-space:
      - spec-decoding: mtp
        conc-list: [16]
        prefill: { num-worker: 1, tp: 8, pp: 2, dcp-size: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 0, tp: 8, pp: 2, dcp-size: 8, ep: 1, dp-attn: false }
      - conc-list: [96]
        prefill: { num-worker: 1, tp: 8, pp: 2, dcp-size: 8 }
        decode: { num-worker: 0, tp: 8, pp: 2, dcp-size: 8 }
      - conc-list: [48, 72]
        prefill: { num-worker: 1, tp: 8, pp: 2, dcp-size: 8 }
        decode: { num-worker: 0, tp: 8, pp: 2, dcp-size: 8 }
`
	m, err := config.LoadMaster([]config.File{{Path: "configs/nvidia-master.yaml", Data: []byte(text)}})
	if err != nil {
		t.Fatal(err)
	}
	got := searchSpaceText(m.Recipes["k"].Rows())
	want := "(agentic-coding) aggregated TP8/PP2/DCP8 MTP conc 16; aggregated TP8/PP2/DCP8 conc [48, 72, 96]"
	if got != want {
		t.Errorf("searchSpaceText =\n  %q\nwant\n  %q", got, want)
	}
}

// TestSearchSpaceSummarised: more arms than a reader reads one by one (a
// dozen)
// are said by their shape: per sequence lengths their number and
// concurrency range, per side its parallelism and worker counts.
func TestSearchSpaceSummarised(t *testing.T) {
	var b strings.Builder
	b.WriteString("k:\n  image: a\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n")
	for _, seq := range []struct {
		isl  int
		arms [][3]int // prefill workers, decode tp, conc
	}{
		{1024, [][3]int{{1, 8, 8}, {1, 16, 615}, {2, 16, 4301}, {2, 32, 666}, {3, 16, 900}, {4, 16, 1000}, {5, 16, 1100}}},
		{8192, [][3]int{{1, 4, 5}, {4, 32, 333}, {12, 16, 2253}, {7, 32, 666}, {3, 32, 700}, {5, 32, 800}, {6, 32, 900}}},
	} {
		fmt.Fprintf(&b, "    - isl: %d\n      osl: 1024\n      search-space:\n", seq.isl)
		for _, a := range seq.arms {
			fmt.Fprintf(&b, "      - { conc-list: [%d], prefill: { num-worker: %d, tp: 4, ep: 4, dp-attn: true }, decode: { num-worker: 1, tp: %d, ep: %d, dp-attn: true } }\n", a[2], a[0], a[1], a[1])
		}
	}
	m, err := config.LoadMaster([]config.File{{Path: "configs/nvidia-master.yaml", Data: []byte(b.String())}})
	if err != nil {
		t.Fatal(err)
	}
	got := searchSpaceText(m.Recipes["k"].Rows())
	want := "14 arms: 1k1k 7 (conc 8-4301), 8k1k 7 (conc 5-2253); prefill TP4/EP4 DPA, 1-12 workers; decode TP8/EP8 DPA, TP16/EP16 DPA, TP32/EP32 DPA or TP4/EP4 DPA"
	if got != want {
		t.Errorf("searchSpaceText =\n  %q\nwant\n  %q", got, want)
	}
}

// TestJSONDetail: a JSON option's change is said by the leaves that
// changed, when there are few.
func TestJSONDetail(t *testing.T) {
	for _, c := range []struct {
		a, b, want string
		ok         bool
	}{
		{`{"kv_connector": "X", "extra": {"bytes": 299875000000, "lazy": false}}`,
			`{"kv_connector": "X", "extra": {"lazy": false, "bytes": 356125000000}}`,
			"extra.bytes from 299875000000 to 356125000000", true},
		{`{"a": 1}`, `{"a": 1, "b": "x"}`, `add b "x"`, true},
		{`{"a": 1, "b": 2}`, `{"a": 1}`, "remove b", true},
		{`{"a": 9007199254740993}`, `{"a": 9007199254740995}`, "a from 9007199254740993 to 9007199254740995", true},
		{`{"a": 1, "b": 1, "c": 1, "d": 1}`, `{"a": 2, "b": 2, "c": 2, "d": 2}`, "", false},
		{`{"a": 1}`, `{"a": 1}`, "", false},
		{`[1]`, `[2]`, "", false},
		{`fp8`, `{"a": 1}`, "", false},
	} {
		got, ok := jsonDetail(c.a, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("jsonDetail(%s, %s) = %q, %v; want %q, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

// TestJSONDetailByPoint: a JSON option whose values differ by point is
// said by the leaf changes every point shares, then the paths that
// changed otherwise, by point (#2707's --compilation-config).
func TestJSONDetailByPoint(t *testing.T) {
	p := func(a, b string) [2]string { return [2]string{a, b} }
	for _, c := range []struct {
		pairs [][2]string
		want  string
		ok    bool
	}{
		{[][2]string{
			p(`{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[2,4],"mode":0}`, `{"cudagraph_mode":"FULL_AND_PIECEWISE","cudagraph_capture_sizes":[2,4,100]}`),
			p(`{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[2,4,6,8],"mode":0}`, `{"cudagraph_mode":"FULL_AND_PIECEWISE","cudagraph_capture_sizes":[2,4,6,8,100]}`),
		}, `cudagraph_mode from "FULL_DECODE_ONLY" to "FULL_AND_PIECEWISE", remove mode, cudagraph_capture_sizes by point`, true},
		// a leaf one point changes and another does not: by point
		{[][2]string{p(`{"a":1,"b":1}`, `{"a":2,"b":1}`), p(`{"a":1,"b":1}`, `{"a":2,"b":3}`)}, "a from 1 to 2, b by point", true},
		{[][2]string{p(`{"a":1}`, `{"a":2}`), p(`fp8`, `{"a":2}`)}, "", false},
		{[][2]string{p(`{"a":1,"b":1,"c":1,"d":1}`, `{"a":2,"b":2,"c":2,"d":2}`)}, "", false},
	} {
		got, ok := jsonDetailByPoint(c.pairs)
		if got != c.want || ok != c.ok {
			t.Errorf("jsonDetailByPoint(%q) = %q, %v; want %q, %v", c.pairs, got, ok, c.want, c.ok)
		}
	}
}

// TestItemFieldBullet: a scenario item's own setting (dram-utilization)
// is drafted; its sequence lengths and search space are the rows'.
func TestItemFieldBullet(t *testing.T) {
	load := func(text string) *config.Recipe {
		m, err := config.LoadMaster([]config.File{{Path: "configs/nvidia-master.yaml", Data: []byte(text)}})
		if err != nil {
			t.Fatal(err)
		}
		return m.Recipes["k"]
	}
	const one = `k:
  image: a
  scenarios:
    agentic-coding:
    - dram-utilization: %s
      search-space:
      - { tp: 8, conc-list: [%d] }
`
	old, new := load(fmt.Sprintf(one, "0.80", 4)), load(fmt.Sprintf(one, "0.95", 8))
	d := config.Diff(old, new)
	got := configBullets(old, new, d)
	if !slices.Contains(got, "Change dram-utilization from 0.8 to 0.95") {
		t.Errorf("configBullets = %q, want the dram-utilization change", got)
	}
	if slices.ContainsFunc(got, func(b string) bool { return strings.Contains(b, "conc-list") }) {
		t.Errorf("configBullets = %q: a search-space field said as an item's", got)
	}
}

// TestPairReplacements: an option removed and one of its family added
// are one replacement; options of no family, or a family with more than
// one of either, stay apart.
func TestPairReplacements(t *testing.T) {
	out := []string{"Remove --hicache-ratio", "Add --max-num-seqs 8", "Add --hicache-size 270", "Remove --max-model-len", "Add --cuda-graph-bs 8 when TP=8", "Remove --cuda-graph-max-bs"}
	swaps := map[int]swap{
		0: {name: "--hicache-ratio", value: " 0.75"},
		1: {add: true, name: "--max-num-seqs", value: " 8"},
		2: {add: true, name: "--hicache-size", value: " 270"},
		3: {name: "--max-model-len"},
		4: {add: true, name: "--cuda-graph-bs", value: " 8", where: " when TP=8"},
		5: {name: "--cuda-graph-max-bs"},
	}
	got := pairReplacements(out, swaps)
	want := []string{"Replace --hicache-ratio 0.75 with --hicache-size 270", "Add --max-num-seqs 8", "Remove --max-model-len", "Add --cuda-graph-bs 8 when TP=8", "Remove --cuda-graph-max-bs"}
	if !slices.Equal(got, want) {
		t.Errorf("pairReplacements =\n  %q\nwant\n  %q", got, want)
	}
	// the claims read the replaced option as the old one, the other as set
	set := false
	for _, c := range claims.Extract([]string{want[0]}) {
		if c.Name == "--hicache-ratio" && c.Strong && !c.Negated {
			t.Errorf("the claims read %s as launched: %+v", c.Name, c)
		}
		set = set || (c.Name == "--hicache-size" && c.Value == "270")
	}
	if !set {
		t.Errorf("the claims do not read --hicache-size 270 of %q", want[0])
	}
}

// TestPointCondition: the fewest comparisons that select the points,
// DP attention and concurrency bounds among them.
func TestPointCondition(t *testing.T) {
	var pts []*recipe.LaunchPoint
	for _, tp := range []int64{4, 8} {
		for _, dpa := range []bool{false, true} {
			for _, c := range []int64{16, 32, 64, 128} {
				pts = append(pts, &recipe.LaunchPoint{ISL: 8192, OSL: 1024, TP: tp, DPAttn: dpa, Conc: c})
			}
		}
	}
	split := func(f func(p *recipe.LaunchPoint) bool) (in, out []*recipe.LaunchPoint) {
		for _, p := range pts {
			if f(p) {
				in = append(in, p)
			} else {
				out = append(out, p)
			}
		}
		return in, out
	}
	for _, c := range []struct {
		sel  func(p *recipe.LaunchPoint) bool
		want string
	}{
		{func(p *recipe.LaunchPoint) bool { return p.DPAttn && p.Conc >= 64 }, "when DP_ATTENTION=true and CONC>=64"},
		{func(p *recipe.LaunchPoint) bool { return p.TP == 4 }, "when TP=4"},
		{func(p *recipe.LaunchPoint) bool { return p.Conc <= 32 }, "when CONC<=32"},
		{func(p *recipe.LaunchPoint) bool { return !p.DPAttn && p.TP == 8 && p.Conc >= 128 }, "when TP=8 and DP_ATTENTION=false and CONC>=128"},
		// no conjunction: two alternatives (the claims read "or")
		{func(p *recipe.LaunchPoint) bool { return p.DPAttn || p.Conc >= 64 }, "when DP_ATTENTION=true or CONC>=64"},
		// no rule of two comparisons
		{func(p *recipe.LaunchPoint) bool { return (p.TP == 4 && p.Conc == 32) || (p.TP == 8 && p.Conc == 16) }, ""},
	} {
		in, out := split(c.sel)
		got, ok := pointCondition(in, out)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("pointCondition = %q, %v; want %q", got, ok, c.want)
		}
	}
}

// TestRowNameContextParallel: a side of prefill context parallelism and
// TP1 is named by the parallelism it has ("PCP8"), not "TP1".
func TestRowNameContextParallel(t *testing.T) {
	r := config.Row{TP: []int64{1, 8}, PCP: []int64{8, 0}, DPA: []bool{false, true}, Workers: []int64{2, 2}}
	if got, want := rowNameOf(r, nameParts{}), "2P2D prefill PCP8, decode TP8 DPA"; got != want {
		t.Errorf("rowNameOf = %q, want %q", got, want)
	}
	plain := r
	plain.PCP = nil
	if rowKey(r) == rowKey(plain) {
		t.Error("a PCP8 row has the key of one without context parallelism")
	}
}

// TestMergeRoles: a change both worker roles share is one bullet; one
// role's change, and a row's name, stay as they are.
func TestMergeRoles(t *testing.T) {
	got := mergeRoles([]string{"Set decode X_Y=1", "Change decode --mem 0.9", "Set prefill X_Y=1", "Change prefill TP8, decode TP8 conc from 8 to 16", "Change decode TP8, decode TP8 conc from 8 to 16"})
	want := []string{"Set X_Y=1 for prefill and decode", "Change decode --mem 0.9", "Change prefill TP8, decode TP8 conc from 8 to 16", "Change decode TP8, decode TP8 conc from 8 to 16"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeRoles =\n  %q\nwant\n  %q", got, want)
	}
}

// TestServedModelNameIsNoNews: the name the server answers to follows
// the model; a change of it is no bullet of its own.
func TestServedModelNameIsNoNews(t *testing.T) {
	with := func(seqs, name string) string {
		return strings.Replace(testfs.Script, "--max-num-seqs 256", "--max-num-seqs "+seqs+" --served-model-name "+name, 1)
	}
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", testfs.Revision("v1", with("256", "m")), s), recipe.NewRev("head", testfs.Revision("v1", with("128", "m-v2")), s),
		[]string{testfs.ScriptPath})
	drafts, err := Entries(ch, Options{})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	got := drafts[0].Description
	if !slices.Contains(got, "Change --max-num-seqs from 256 to 128") || slices.ContainsFunc(got, func(b string) bool { return strings.Contains(b, "served-model-name") }) {
		t.Errorf("bullets %q: want the --max-num-seqs change alone", got)
	}
}

// TestScriptBulletsValuesAndBranches: an option whose value is a shell
// variable the script assigns once is said with that value, and the
// options one branch adds are one bullet.
func TestScriptBulletsValuesAndBranches(t *testing.T) {
	base := testfs.Script
	head := strings.Replace(testfs.Script, "export VLLM_USE_X=1\n", `export VLLM_USE_X=1
HICACHE_RATIO=4
HICACHE_POLICY="write_through"
EXTRA=()
if [ "$KV_OFFLOADING" = "dram" ]; then
  EXTRA+=(--enable-hierarchical-cache
          --hicache-ratio "$HICACHE_RATIO"
          --hicache-write-policy "${HICACHE_POLICY}")
fi
`, 1)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", testfs.Revision("v1", base), s), recipe.NewRev("head", testfs.Revision("v1", head), s), []string{testfs.ScriptPath})
	got := scriptBullets(ch, testfs.ScriptPath, nil)
	want := "Add --enable-hierarchical-cache, --hicache-ratio 4 and --hicache-write-policy write_through"
	if !slices.Contains(got, want) {
		t.Errorf("scriptBullets = %q\nwant one %q", got, want)
	}
}

// TestByPointCounted: a new recipe's long list of settings names those
// with values and counts those set by point; a short one names all.
func TestByPointCounted(t *testing.T) {
	short := []string{"--a 1", "--b (by point)"}
	if got := byPointCounted(short); strings.Join(got, ", ") != "--a 1, --b (by point)" {
		t.Errorf("short: %q", got)
	}
	long := []string{"--a 1", "--b (by point)", "--c", "--d 2", "--e (by point)", "--f", "--g 3", "--h", "--i (by point)"}
	if got := strings.Join(byPointCounted(long), ", "); got != "--a 1, --c, --d 2, --f, --g 3, --h, 3 more set by point" {
		t.Errorf("long: %q", got)
	}
}
