package recipe

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/perflog/perflog/recipe/dryrun"
)

// Wiring: which options of a launched server realise a point's settings.
// A config row that says dp-attn: true, ep: 4, spec-decoding: mtp or
// kv-offloading: dram is only benchmarked as such when the server is told;
// launch/not-wired reports a point whose server carries none of the
// options (or variables, or lines of a config file it is given) that
// realise one of its settings.
//
// A realiser is
//
//	--name       an option of the server's command line; for tp and ep,
//	             a numeric value must be the point's
//	$NAME        a variable of the server's environment ($LMCACHE_* for
//	             a prefix)
//	file:TEXT    a line of a file the run wrote and the command line
//	             names (trtllm's --extra_llm_api_options YAML), matched as
//	             a regular expression
//
// The InferenceX defaults were read from the launches of every
// single-node point at the corpus head; .perflog.yaml (launch: wiring:)
// replaces a framework's table.

// Settings a point can ask of its server.
const (
	SettingTP   = "tp"
	SettingEP   = "ep"
	SettingDPA  = "dp-attn"
	SettingSpec = "spec-decoding"
	SettingKV   = "kv-offloading"
)

// DefaultWiring is the InferenceX table, by framework.
var DefaultWiring = map[string]map[string][]string{
	"sglang": {
		SettingTP:   {"--tp", "--tp-size", "--tensor-parallel-size"},
		SettingEP:   {"--ep", "--ep-size", "--expert-parallel-size", "--enable-ep-moe", "--moe-a2a-backend"},
		SettingDPA:  {"--enable-dp-attention"},
		SettingSpec: {"--speculative-algorithm", "--speculative-algo"},
		SettingKV:   {"--enable-hierarchical-cache", "--hicache-storage-backend", "--enable-lmcache", "$LMCACHE_*"},
	},
	"vllm": {
		SettingTP:   {"--tensor-parallel-size", "-tp"},
		SettingEP:   {"--enable-expert-parallel", "-ep"},
		SettingDPA:  {"--data-parallel-size", "-dp", "--data-parallel-size-local"},
		SettingSpec: {"--speculative-config"},
		SettingKV:   {"--kv-transfer-config", "--kv-offloading-backend", "--kv-offloading-size", "$VLLM_USE_SIMPLE_KV_OFFLOAD", "$LMCACHE_*"},
	},
	"trt": {
		SettingTP:   {"--tp_size", "--tp-size"},
		SettingEP:   {"--ep_size", "--ep-size", "file:moe_expert_parallel_size"},
		SettingDPA:  {"file:enable_attention_dp: *true"},
		SettingSpec: {"file:speculative_config", "file:decoding_type"},
		SettingKV:   {"file:host_cache_size", "file:kv_connector", "$LMCACHE_*"},
	},
	"atom": {
		SettingTP:   {"-tp", "--tensor-parallel-size"},
		SettingEP:   {"--enable-expert-parallel", "-ep"},
		SettingDPA:  {"--enable-dp-attention"},
		SettingSpec: {"--method", "--num-speculative-tokens"},
		SettingKV:   {"--kv-transfer-config", "$LMCACHE_*"},
	},
}

// frameworkAliases name the table a framework uses.
var frameworkAliases = map[string]string{"trtllm": "trt", "trt-llm": "trt", "sglang-router": "sglang"}

// Wiring returns the realisers of a framework's settings (nil: no table,
// nothing is judged).
func (r *Rev) Wiring(framework string) map[string][]string {
	if a, ok := frameworkAliases[framework]; ok {
		framework = a
	}
	if r.Settings != nil {
		if w, ok := r.Settings.Launch.Wiring[framework]; ok {
			return w
		}
	}
	return DefaultWiring[framework]
}

// Unwired is a setting of a point its server does not realise.
type Unwired struct {
	Setting string // tp, ep, dp-attn, spec-decoding, kv-offloading
	Value   string // the point's value ("true", "4", "mtp", "dram")
	// Want lists the realisers looked for; Got, when set, is the option
	// found with another value (--tp 4 for tp: 8).
	Want []string
	Got  string
}

// NotWired lists the settings of a point its launched server does not
// realise, by the framework's wiring table. A point whose setting is
// off (dp-attn false, ep 1, no spec decoding, no offloading) asks
// nothing.
func NotWired(p *LaunchPoint, srv *dryrun.Command, wiring map[string][]string) []Unwired {
	if srv == nil || wiring == nil {
		return nil
	}
	var out []Unwired
	check := func(setting, value string, number int64) {
		want := wiring[setting]
		if len(want) == 0 {
			return
		}
		got := ""
		for _, w := range want {
			ok, other := realises(srv, w, number)
			if ok {
				return
			}
			if other != "" && got == "" {
				got = other
			}
		}
		out = append(out, Unwired{Setting: setting, Value: value, Want: want, Got: got})
	}
	if p.TP > 0 && !tpTimesDP(srv, wiring, p.TP) {
		check(SettingTP, strconv.FormatInt(p.TP, 10), p.TP)
	}
	if p.EP > 1 {
		check(SettingEP, strconv.FormatInt(p.EP, 10), p.EP)
	}
	if p.DPAttn {
		check(SettingDPA, "true", 0)
	}
	if p.Spec != "" && p.Spec != "none" {
		check(SettingSpec, p.Spec, 0)
	}
	if p.KVOffloading != "" && p.KVOffloading != "none" {
		check(SettingKV, p.KVOffloading, 0)
	}
	return out
}

// dpOptions are data-parallel sizes (besides the table's dp-attn
// options): a point's tp is its GPUs, which a server may split as
// tensor × data parallel (vLLM's -tp 1 -dp 8 for DP attention).
var dpOptions = []string{"--dp", "--dp-size", "--data-parallel-size", "-dp"}

// tpTimesDP reports whether the server's tensor-parallel size (1 when
// not given) times its data-parallel size is the point's tp.
func tpTimesDP(srv *dryrun.Command, wiring map[string][]string, tp int64) bool {
	last := func(names []string) int64 {
		for _, n := range names {
			if v, ok := srv.Flag(n); ok && len(v) > 0 {
				if x, err := strconv.ParseInt(v[len(v)-1], 10, 64); err == nil {
					return x
				}
			}
		}
		return 0
	}
	t, d := last(wiring[SettingTP]), last(append(append([]string(nil), wiring[SettingDPA]...), dpOptions...))
	if t == 0 {
		t = 1 // the servers' default tensor-parallel size
	}
	return d > 1 && t*d == tp
}

// realises reports whether the server carries realiser w; other names
// the option found with another numeric value than number.
func realises(srv *dryrun.Command, w string, number int64) (ok bool, other string) {
	switch {
	case strings.HasPrefix(w, "$"):
		name := strings.TrimPrefix(w, "$")
		for k := range srv.Env {
			if m, _ := path.Match(name, k); m {
				return true, ""
			}
		}
		return false, ""
	case strings.HasPrefix(w, "file:"):
		re, err := regexp.Compile(`(?m)^\s*` + strings.TrimPrefix(w, "file:"))
		if err != nil {
			return false, ""
		}
		for _, content := range srv.Files {
			if re.MatchString(content) {
				return true, ""
			}
		}
		return false, ""
	}
	vals, found := srv.Flag(w)
	if !found {
		return false, ""
	}
	if number <= 0 || len(vals) == 0 {
		return true, ""
	}
	v := vals[len(vals)-1] // the last one wins
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n != number {
		return false, fmt.Sprintf("%s %s", w, v)
	}
	return true, ""
}
