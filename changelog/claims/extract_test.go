package claims

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/recipe"
)

// claimText renders a claim compactly for comparison.
func claimText(c Claim) string {
	var b strings.Builder
	b.WriteString(c.Kind)
	if c.Negated {
		b.WriteString("!")
	}
	if c.Name != "" {
		b.WriteString(" " + c.Name)
	}
	if c.Value != "" {
		b.WriteString("=" + c.Value)
	}
	if c.From != "" {
		b.WriteString(" from " + c.From)
	}
	if len(c.Conc) > 0 {
		b.WriteString(" " + fmt.Sprint(c.Conc))
	}
	if len(c.Range) > 0 {
		b.WriteString(fmt.Sprintf(" %d-%d", c.Range[0], c.Range[1]))
	}
	if c.Max > 0 {
		b.WriteString(fmt.Sprintf(" max %d", c.Max))
	}
	if len(c.When) > 0 {
		b.WriteString(" when " + condText(c.When))
	}
	for _, q := range c.Rows {
		b.WriteString(" (" + q.text() + ")")
	}
	if c.Kind == KindParallel && c.Row != nil {
		b.WriteString(" " + c.Row.text())
	}
	return b.String()
}

func TestExtract(t *testing.T) {
	for _, tc := range []struct {
		bullet string
		want   []string // in order; kinds not listed in only are ignored
		only   string   // restrict to one kind ("" = all)
	}{
		{"Update vLLM image from v0.11.2 to v0.13.0", []string{"image=v0.13.0 from v0.11.2"}, ""},
		{"Image: lmsysorg/sglang:v0.5.8-cu130", []string{"image lmsysorg/sglang=lmsysorg/sglang:v0.5.8-cu130"}, ""},
		{"Update TRT image from nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc0.post1 to nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc2",
			[]string{"image nvcr.io/nvidia/tensorrt-llm/release=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc2 from nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc0.post1"}, "image"},
		{"Bump image to latest rocm/sgl-dev:sglang-0.5.8-mori", []string{"image rocm/sgl-dev=rocm/sgl-dev:sglang-0.5.8-mori"}, "image"},
		{"Add VLLM_FLOAT32_MATMUL_PRECISION=high, remove VLLM_FLASHINFER_ALLREDUCE_BACKEND=mnnvl",
			[]string{"env VLLM_FLOAT32_MATMUL_PRECISION=high", "env! VLLM_FLASHINFER_ALLREDUCE_BACKEND=mnnvl"}, ""},
		{"Enable ATOM_DISABLE_MMAP=true", []string{"env ATOM_DISABLE_MMAP=true"}, ""},
		{"Set SGLANG_RADIX_FORCE_MISS=1, remove --disable-radix-cache, and explicitly pass --disable-piecewise-cuda-graph.",
			[]string{"env SGLANG_RADIX_FORCE_MISS=1", "flag! --disable-radix-cache", "flag --disable-piecewise-cuda-graph"}, ""},
		{"Replace --enable-ep-moe with --ep-size $EP_SIZE", []string{"flag --ep-size"}, "flag"},
		{"MoE backend left at auto (unlike MI355X's --moe-backend aiter)", nil, "flag"},
		{"Add --max-num-seqs 256 and --kv-cache-dtype fp8", []string{"flag --max-num-seqs=256", "flag --kv-cache-dtype=fp8"}, "flag"},
		{"Lower --gpu-memory-utilization from 0.95 to 0.90", []string{"flag --gpu-memory-utilization=0.90 from 0.95"}, "flag"},
		// values stated with the name: from A to B, arrows, "to B" under a verb of setting
		{"Change --mem-fraction-static from 0.8 to 0.9", []string{"flag --mem-fraction-static=0.9 from 0.8"}, "flag"},
		{"Bump --mem-fraction-static 0.8 -> 0.9", []string{"flag --mem-fraction-static=0.9 from 0.8"}, "flag"},
		{"--attention-backend=triton → flashinfer", []string{"flag --attention-backend=flashinfer from triton"}, "flag"},
		{"Raise mem-fraction-static to 0.9", []string{"flag --mem-fraction-static=0.9"}, "flag"},
		{"Increase --cuda-graph-max-bs to 256", []string{"flag --cuda-graph-max-bs=256"}, "flag"},
		{"Change SGLANG_X from 0 to 1", []string{"env SGLANG_X=1 from 0"}, "env"},
		{"Rerun: change SGLANG_X from 0 to 1", []string{"env SGLANG_X=1"}, "env"},
		{"SGLANG_USE_AITER=0 -> 1", []string{"env SGLANG_USE_AITER=1 from 0"}, "env"},
		{"Set SGLANG_USE_AITER to 1", []string{"env SGLANG_USE_AITER=1"}, "env"},
		// a bracketed list with spaces after its commas is every item
		{"Add decode TP8 KV offload dram mooncake conc [48, 72, 96]", []string{"conc [48 72 96] (tp 8)"}, "conc"},
		// a change of value stated with the name holds in measurement prose
		{"raise SGLANG_SIMULATE_ACC_LEN from 2.99 to 3.61 to reflect higher measured acceptance rate", []string{"env SGLANG_SIMULATE_ACC_LEN=3.61 from 2.99"}, "env"},
		// a removal said after the name
		{"PYTORCH_ALLOC_CONF=expandable_segments:True dropped", []string{"env! PYTORCH_ALLOC_CONF=expandable_segments:True"}, "env"},
		{"PYTORCH_ALLOC_CONF=expandable_segments:True dropped on the lmcache arms only", []string{"env PYTORCH_ALLOC_CONF=expandable_segments:True"}, "env"},
		{"--disable-radix-cache removed", []string{"flag! --disable-radix-cache"}, "flag"},
		{"--enable-flashinfer-trtllm-moe & --enable-ep-moe is no longer available in sglang so we needed to change it",
			[]string{"flag! --enable-flashinfer-trtllm-moe", "flag! --enable-ep-moe"}, "flag"},
		// "to" that is no value
		{"Change --attention-backend to match the sibling", []string{"flag --attention-backend"}, "flag"},
		{"Add --cuda-graph-max-bs to the server args", []string{"flag --cuda-graph-max-bs"}, "flag"},
		{"Add --cuda-graph-max-bs to 0.9 points", []string{"flag --cuda-graph-max-bs"}, "flag"},
		{"Use 1k/1k TP4/EP1 c1-c32 and TP4/EP4 c64-c256", []string{"conc 1-32 (tp 4, ep 1, 1024/1024)", "conc 64-256 (tp 4, ep 4, 1024/1024)"}, "conc"},
		{"Sweep conc=48 across TP8 +/- DPA", []string{"conc [48] (tp 8)"}, "conc"},
		{"Add concurrency 48 and 64 to the TP8/EP1 sweep, and 64 and 192 to the TP8/EP8 DP-attention sweep.",
			[]string{"conc [48 64] (tp 8, ep 1)"}, "conc"},
		{"stops at conc 16 rather than 24", []string{"conc [16]"}, "conc"},
		{"Measured uplift (tok/s/gpu): conc256 782.7->905", nil, "conc"},
		{"H200 TP8+EP8 upper bound moves 512->256", nil, "conc"},
		{"8k/1k topologies: 1p8d-dep4-tp4 (conc 32,128)", []string{"conc [32 128]"}, "conc"},
		{"ISL1K/OSL1K: conc 8–8192 across ctx1dep4", []string{"conc 8-8192 (1024/1024)"}, "conc"},
		{"drop the 2P1D DEP8 sweep (conc 128/256) and the 1P1D DEP8 conc=1024 point", nil, "conc"},
		{"Switch the search space from TP8/EP8 to TP8/EP1", []string{"parallel tp 8", "parallel ep 1"}, "parallel"},
		{"Add DEP8 dp-attn=true probes", []string{"parallel tp 8, ep 8, dp-attn true", "parallel dp-attn true"}, "parallel"},
		{"preserving the legacy 2p1d-dep2-dep4 point", nil, "parallel"},
		{"Search space mirrors the non-MTP entry", nil, "spec-decoding"},
		{"Add MTP variant", []string{"spec-decoding mtp"}, "spec-decoding"},
		{"TP4 conc 1-512 sweep at 1k1k and 8k1k", []string{"seq-len=1024/1024", "seq-len=8192/1024"}, "seq-len"},
		{"Add HiCache KV offloading support", []string{"kv-cache hicache"}, "kv-cache"},
		{"FP8 KV cache, radix cache disabled, and CUDA graphs capped", []string{"kv-cache! radix cache"}, "kv-cache"},
		{"Align server args (disable-radix-cache, cuda-graph-max-bs)", []string{"flag --disable-radix-cache", "flag --cuda-graph-max-bs"}, "flag"},
		{"See https://github.com/x/y/pull/1?conc=4&tp=8 and recipes/a/b/1k1k/TP8.yaml", nil, ""},
		{"Add --chat_template /scratch/fsw/models/M3/chat_template.jinja", []string{"flag --chat_template"}, "flag"},
		// ranges, maxima and conditions
		{"Extend concurrency from 4-64 to 4-256", []string{"conc from 4-64 4-256"}, "conc"},
		{"Concurrency sweep up to 1024.", []string{"conc max 1024"}, "conc"},
		{"Extend maximum concurrency to 256 across all sequence lengths", []string{"conc max 256"}, "conc"},
		{"conc up to 208 for TP8/EP8", []string{"conc max 208 (tp 8, ep 8)"}, "conc"},
		{"DEP8 conc capped at 208 [72, 104]", nil, "conc"},
		{"Sweep will expand to TP=4/8 conc 4–256 once PR3 lands", nil, ""},
		{"glm5-fp4-b200-sglang-mtp: override --mem-fraction-static from 0.85 to 0.8 when ISL=8192, OSL=1024, and CONC>128",
			[]string{"flag --mem-fraction-static=0.8 from 0.85 when isl = 8192 and osl = 1024 and conc > 128"}, "flag"},
		{"Use --enable-dp-attention for conc >= 128", []string{"flag --enable-dp-attention when conc >= 128"}, ""},
		{"Conditionally enable VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT=1 (TP=2 EP=1 CONC<=16, TP=8 EP=8 CONC<=64)",
			[]string{"env VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT=1"}, "env"},
		{"Floor --max-running-requests at 8 (CONC * 3 / 2 still applies above CONC=5)", nil, "conc"},
		{"Set SGLANG_X=1 when isl>=8192 && conc>=64", []string{"env SGLANG_X=1 when isl >= 8192 and conc >= 64"}, ""},
		// a root cause ruled out is a story, not a removal (#1951)
		{"Root cause is EP8 itself (garbage generation), not --async-scheduling, which was tried and ruled out first.", nil, "flag"},
		{"Pass --max-num-seqs when DP_ATTENTION=true or CONC>=64", []string{"flag --max-num-seqs when dp-attn = true, or conc >= 64"}, ""},
		{"Set SGLANG_X=1 when isl>=8192 || conc>=64", []string{"env SGLANG_X=1 when isl >= 8192, or conc >= 64"}, ""},
		{"Pass --enable-tbo when DP_ATTENTION=true and CONC>=64", []string{"flag --enable-tbo when dp-attn = true and conc >= 64"}, ""},
		{"Set SGLANG_Y=1 when dp-attn=false", []string{"env SGLANG_Y=1 when dp-attn = false"}, ""},
		{"Set SGLANG_Z=1 when TP=true", []string{"env SGLANG_Z=1"}, ""},
		{"Expand the TP sweep (included TP=4) for 8k/1k configuration for conc=4 to 64", []string{"conc 4-64 (8192/1024)"}, "conc"},
		// "no" negates the noun it stands before, not a comma list of other settings (#1762)
		{"no EP, dp-attn off, PREFILL_NODES=1/DECODE_NODES=1", []string{"env PREFILL_NODES=1", "env DECODE_NODES=1"}, "env"},
		{"no EP, dp-attn off, PREFILL_NODES=1", []string{"parallel dp-attn false"}, "parallel"},
		{"no SGLANG_A=1, SGLANG_B=1 or SGLANG_C", []string{"env! SGLANG_A=1", "env! SGLANG_B=1", "env! SGLANG_C"}, "env"},
		{"without --enable-dp-attention, --disable-radix-cache", []string{"flag! --enable-dp-attention", "flag! --disable-radix-cache"}, "flag"},
		{"1P+1D TP8/EP1 CI smoke sweep for 1k1k and 8k1k (conc 8-512)", []string{"conc 8-512 (1P1D, tp 8, ep 1)"}, "conc"},
		{"H200 has no FP4 path, so --enable-dp-attention is omitted", []string{"flag! --enable-dp-attention"}, "flag"},
		{"Sweeps with and without EP and dp-attn at 1k1k, conc 1-1024", []string{"conc 1-1024 (1024/1024)"}, "conc"},
		{"Without this arg, MTP acceptance rates are artificially high", []string{"spec-decoding mtp"}, "spec-decoding"},
		{"no --enable-dp-attention, cuda graphs off, --disable-radix-cache", []string{"flag! --enable-dp-attention", "flag --disable-radix-cache"}, "flag"},
	} {
		var got []string
		for _, c := range Extract([]string{tc.bullet}) {
			if tc.only == "" || c.Kind == tc.only {
				got = append(got, claimText(c))
			}
		}
		if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
			t.Errorf("%q\n got  %q\n want %q", tc.bullet, got, tc.want)
		}
	}
}

// FuzzExtract: any text extracts without panicking, and every claim
// names its kind and a bullet of the input.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"Update vLLM image from v0.11.2 to v0.13.0",
		"Use 1k/1k TP4/EP1 c1-c32 and TP4/EP4 c64-c256; use 8k/1k TP4/EP1 c1-c32",
		"Set A_B=1, remove --x (previously y) and pass --z 3: conc [1, 2, 3]",
		"replace X_Y=0 with Z_W=1 -> TP8 → TP4 from nvcr.io#a/b:c to d/e:f@sha256:0123456789",
		"((())) :: ;; .. -- conc conc= c c- 1,2,3,,, k8k1 DEP TEP dp-attn false",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range Extract([]string{s, s}) {
			if c.Kind == "" || c.Bullet < 0 || c.Bullet > 1 {
				t.Fatalf("claim %+v", c)
			}
			if c.Kind == KindConc && len(c.Conc) == 0 && len(c.Range) != 2 && c.Max <= 0 {
				t.Fatalf("conc claim without numbers: %+v", c)
			}
		}
	})
}

// TestQuotedMatch: the option a bullet's variable names, as the hint
// quotes it, keeps its quotes whole.
func TestQuotedMatch(t *testing.T) {
	re := regexp.MustCompile(`[A-Za-z0-9_.-]*msa_backend[A-Za-z0-9_.-]*(?:["']?\s*[:= ]\s*["']?[A-Za-z0-9_.-]+)?`)
	for line, want := range map[string]string{
		`attention-config: '{"backend": "X", "msa_backend": "cutlass"}'`: `"msa_backend": "cutlass"`,
		`--attention_config.msa_backend cutlass \`:                       `--attention_config.msa_backend cutlass`,
		`export MSA_X=1 msa_backend='fast' # note`:                       `msa_backend='fast'`,
		`msa_backend: fast`: `msa_backend: fast`,
		`"msa_backend"`:     `msa_backend`,
		`no setting here`:   ``,
	} {
		if got := quotedMatch(line, re); got != want {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
}

// TestBoundIsNoVariableSet: NAME=VALUE after a comparison names a bound
// (a constant of the sweep generator), not a variable the launch sets.
func TestBoundIsNoVariableSet(t *testing.T) {
	for _, b := range []string{
		"Eval concurrency set to the median eligible conc (>= MIN_EVAL_CONC=16) of the selected config",
		"only rows with conc ≥ MIN_EVAL_CONC=16",
	} {
		for _, c := range Extract([]string{b}) {
			if c.Kind == KindEnv && c.Strong {
				t.Errorf("%q: read as setting %s=%s", b, c.Name, c.Value)
			}
		}
	}
	got := Extract([]string{"Set SGLANG_X_Y=1 when conc > 8"})
	if len(got) == 0 || got[0].Kind != KindEnv || got[0].Name != "SGLANG_X_Y" || got[0].Value != "1" {
		t.Errorf("a variable set, with a comparison after it: %+v", got)
	}
}

// TestSpeaksOfEvery: a bullet's one concurrency range speaks of every
// touched row its qualifiers name, unless the bullet names other rows or
// says the rows stayed as they were.
func TestSpeaksOfEvery(t *testing.T) {
	for _, tc := range []struct {
		bullet string
		every  bool
	}{
		{"Sweep conc 4-64", true},
		{"Concurrency sweep up to 1024", true},
		{"Configurations: TP=8, EP=1, concurrency 4-64 for 1k1k, 1k8k, and 8k1k sequence lengths", true},
		// the range is about the rows the bullet names (#947: its tp4 ep4
		// row runs 16-64, which the reading as "some row" confirmed
		// from the tp2 rows)
		{"Add tp4 ep4 search-space entries (conc 32-256) for all seq-len configs", true},
		{"Search space: TP=8, EP=8, DP-attn=true, CONC 4-64 for both 1k1k and 8k1k", true},
		{"TP8 conc 4-512, same-model recipe as on MI355X", true},
		// rows named elsewhere in the bullet are not the range's
		{"disagg: 1P1D-4P1D (TP4/DEP4 prefill, TP4/DEP4/DEP8 decode, MTP/NEXTN, hicache) over 7 Pareto points at concurrency 32-384", false},
		{"Add TP2 and TP8 configurations, extend concurrency range to 256, and add TP8 conc=1-2 for ISL8192", false},
		{"conc1-2 unchanged (latency-bound)", false},
		{"conc 4, 8 and 16", false}, // a list, not a range
		// several ranges, each paired with its rows (claims v12)
		{"TP4 conc 4-64, TP8 conc 4-256", true},
		// rows joined to the range by "over" or "at" (claims v14)
		{"Search-space: tp=8 and tp=4/ep=1 over conc 4-64, on both 1024/1024 and 8192/1024 ISL/OSL", true},
		// a row named in another sentence is not the range's (claims v14)
		{"Search space is two TP8 arms at conc 1-24: GPU-resident and host-DRAM offload. TP4 would need ~375 GB/GPU against 288 GB of HBM.", true},
		// rows named a few words before the range, however many, are its
		// rows; a parallelism in an aside closed before a range of
		// sequence lengths is among its rows (claims v27)
		{"1P+1D TP8/EP1 CI smoke sweep for 1k1k and 8k1k (conc 8-512)", true},
		{"Expand the TP sweep (included TP=4) for 8k/1k configuration for conc=4 to 64", true},
	} {
		var got []bool
		for _, c := range Extract([]string{tc.bullet}) {
			if c.Kind == KindConc {
				got = append(got, c.every)
			}
		}
		if len(got) == 0 || slices.Contains(got, !tc.every) {
			t.Errorf("%q: every %v, want %v", tc.bullet, got, tc.every)
		}
	}
}

// TestExtractInVocabulary: an option written without dashes that no
// engine list has is read when the repository's scripts pass it and the
// bullet states a value for it, never when it is named in passing.
func TestExtractInVocabulary(t *testing.T) {
	vocab := func(w string) bool { return w == "hicache-write-size" || w == "top-k" }
	for _, tc := range []struct {
		bullet string
		want   string // name=value of the flag claim, "" for none
	}{
		{"Pin hicache-write-size to 64 for both arms", "--hicache-write-size=64"},
		{"Use EAGLE with three speculative steps, top-k 1, four draft tokens", ""},
		{"Add recipes with chat-template inputs", ""},
	} {
		got := ""
		for _, c := range ExtractIn([]string{tc.bullet}, vocab) {
			if c.Kind == KindFlag {
				got = c.Name + "=" + c.Value
			}
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.bullet, got, tc.want)
		}
		for _, c := range Extract([]string{tc.bullet}) {
			if c.Kind == KindFlag {
				t.Errorf("%q: without the vocabulary read %s", tc.bullet, c.Name)
			}
		}
	}
}

// TestExtractSwitches: a feature named in English is read as the option
// the repository's scripts switch it with, its polarity from the verb and
// from which option turns it off.
func TestExtractSwitches(t *testing.T) {
	vocab := map[string]bool{"enable-torch-compile": true, "disable-cuda-graph": true, "enable-eplb": true,
		"enable-prefix-caching": true, "no-enable-prefix-caching": true, "enable-piecewise-cuda-graph": true,
		"disable-radix-cache": true, "enable-metrics": true, "enable-dp-attention": true, "enable-chunked-prefill": true}
	for _, tc := range []struct {
		bullet string
		want   string // the flag claim, "!" when negated; "" for none
	}{
		{"Disable torch.compile for MI355X DeepSeek-R1 FP8 SGLang", "!--enable-torch-compile"},
		{"Enable EPLB for DEP configs", "--enable-eplb"},
		{"Enable piecewise CUDA graphs under most conditions", "--enable-piecewise-cuda-graph"},
		{"Enable CUDA graphs", "!--disable-cuda-graph"},
		{"Drop CUDA graphs for the TP8 arm", "--disable-cuda-graph"},
		{"Prefix caching disabled, no speculative decoding", "--no-enable-prefix-caching"},
		{"Enable prefix caching", "!--no-enable-prefix-caching"},
		{"Gains: FP4 kernel improvements, torch.compile cold-start fix", ""}, // named, not switched
		{"Enable metrics", ""},         // one plain word stays prose
		{"Use DP attention", ""},       // a row's parallelism, not a switch
		{"Enable the radix cache", ""}, // read as the KV-cache feature
		{"Enable EPLB rather than TBO", "--enable-eplb"},
		{"Fix a ValueError with prefix caching", ""},                            // "with" attaches, it does not switch
		{"Select CUDA graph capture sizes by concurrency", ""},                  // a modifier
		{"Keep chunked prefill 8192", ""},                                       // a setting with a value
		{"Add no-enable-prefix-caching", "--no-enable-prefix-caching"},          // read whole, not as "prefix caching" on
		{"Use vLLM with prefix caching enabled", "!--no-enable-prefix-caching"}, // on, said after it
	} {
		got := ""
		for _, c := range ExtractIn([]string{tc.bullet}, func(w string) bool { return vocab[w] }) {
			if c.Kind != KindFlag {
				continue
			}
			if got != "" {
				t.Errorf("%q: a second flag claim %s", tc.bullet, c.Name)
			}
			got = c.Name
			if c.Negated {
				got = "!" + got
			}
			if !c.Strong {
				t.Errorf("%q: %s is weak", tc.bullet, c.Name)
			}
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.bullet, got, tc.want)
		}
	}
}

// TestLayoutsQualifyRows: a multi-node layout names rows by their worker
// counts (and each side's parallelism when it says it); a range in
// parentheses right after one is about it, within the sequence lengths
// its sentence names; a layout in a file's name is none.
func TestLayoutsQualifyRows(t *testing.T) {
	cs := Extract([]string{"1k1k: balanced 1P-TP4/1D-TP4 (conc 1-1024) + decode-heavy 1P-TP4/2D-TP4 (conc 256-2048). 8k1k: prefill-heavy 2P/1D (conc 128-512)"})
	want := map[string]string{
		"conc 1-1024":   `[{"tp":[4,4],"seq":["1024/1024"],"workers":[1,1]}]`,
		"conc 256-2048": `[{"tp":[4,4],"seq":["1024/1024"],"workers":[1,2]}]`,
		"conc 128-512":  `[{"seq":["8192/1024"],"workers":[2,1]}]`,
	}
	for _, c := range cs {
		if w, ok := want[c.Text]; ok {
			got, _ := json.Marshal(c.Rows)
			if string(got) != w {
				t.Errorf("%q: rows %s, want %s", c.Text, got, w)
			}
			delete(want, c.Text)
		}
	}
	for k := range want {
		t.Errorf("%q not read", k)
	}
	for _, c := range Extract([]string{"Add disagg-gb300-2p1d-dep8-dep12.yaml"}) {
		if c.Kind == KindParallel && c.Row != nil && len(c.Row.Workers) > 0 {
			t.Errorf("a file's name read as a layout: %+v", c)
		}
	}
}

// TestSequenceLabel: a bullet that opens with sequence lengths ("8k1k:")
// speaks of rows of those lengths in every range it states.
func TestSequenceLabel(t *testing.T) {
	b := "8k1k: 3 low-latency (1p5d / 1p1d, TP4 prefill / TP8 decode, conc up to 512) + 3 high-throughput (2p1d, DEP8 decode, single concurrency 768 / 1024)"
	n := 0
	for _, c := range Extract([]string{b}) {
		if c.Kind != KindConc {
			continue
		}
		n++
		if len(c.Rows) == 0 {
			t.Errorf("%q: no rows", c.Text)
		}
		for _, q := range c.Rows {
			if !slices.Equal(q.Seq, []string{"8192/1024"}) {
				t.Errorf("%q: rows %+v, want each of 8192/1024", c.Text, c.Rows)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d ranges read, want 2", n)
	}
}

// TestRangesPairedWithRowsSpeakOfEvery: in a bullet of several ranges,
// one paired with rows of its own speaks of every touched row of them;
// not when KV offloading tells rows apart (which the pairing does not
// carry), nor a range with no rows.
func TestRangesPairedWithRowsSpeakOfEvery(t *testing.T) {
	for _, tc := range []struct {
		bullet string
		every  bool
	}{
		{"Use 1k/1k TP4/EP1 c1-c32 and TP4/EP4 c64-c256", true},
		{"ISL=1024: TP8 conc 4-128; DP8 (dp-attn) conc 256-4096", true},
		{"Add resident TP8 c1-c5, and Mooncake DRAM offload c6/c8", false},
		{"Sweep conc 4-64 and conc 128-256", false},
		{"TP4 conc 4-64 and TP8 conc 4-64 unchanged", false},
		{"1k1k: 1P-TP4/1D-TP4 (conc 1-1024) + 1P-TP4/2D-TP4 (conc 256-2048). The client keeps --dsv4", true},
		// "unchanged" of another clause than the ranges' (claims v27)
		{"1k1k: 4 MTP variants, behavior unchanged from the previous recipe — 2 low-latency (dep4-1p prefill / tep8 decode at 5 and 6 decode nodes, conc up to 512) + 2 max-throughput (dep4-1p prefill / dep8 decode at 1 and 2 decode nodes, conc up to 1024)", true},
	} {
		n := 0
		for _, c := range Extract([]string{tc.bullet}) {
			if c.Kind != KindConc || (c.Max == 0 && len(c.Range) != 2) {
				continue
			}
			n++
			if c.every != tc.every && (tc.every || len(c.Rows) > 0 || c.every) {
				t.Errorf("%q: %q every = %v, want %v", tc.bullet, c.Text, c.every, tc.every)
			}
		}
		if n == 0 {
			t.Errorf("%q: no range read", tc.bullet)
		}
	}
}

// TestMeetsDPAttention: a condition on DP attention is decided for every
// point, with or without it.
func TestMeetsDPAttention(t *testing.T) {
	when := Extract([]string{"Pass --enable-tbo when DP_ATTENTION=true and CONC>=64"})[0].When
	for _, c := range []struct {
		dpa  bool
		conc int64
		want bool
	}{{true, 64, true}, {true, 32, false}, {false, 128, false}} {
		ok, decided := meets(&recipe.LaunchPoint{DPAttn: c.dpa, Conc: c.conc, TP: 8}, when)
		if ok != c.want || !decided {
			t.Errorf("meets(dpa %v, conc %d) = %v, %v; want %v, decided", c.dpa, c.conc, ok, decided, c.want)
		}
	}
}

// TestConditionalOptionIsNoLaunchClaim: an option a bullet names as passed
// only at times ("conditional --kv_cache_dtype") is what a script can do,
// not what every point launches.
func TestConditionalOptionIsNoLaunchClaim(t *testing.T) {
	for bullet, want := range map[string]int{
		"server_atom.sh: conditional --kv_cache_dtype, MAX_MODEL_LEN support": 0,
		"Optionally pass --enable-eplb":                                       0,
		"Pass --enable-eplb when set":                                         0,
		"server_atom.sh: --kv_cache_dtype, MAX_MODEL_LEN support":             1,
		"Add --enable-eplb":                                                   1,
	} {
		n := 0
		for _, c := range Extract([]string{bullet}) {
			if c.Kind == KindFlag {
				n++
			}
		}
		if n != want {
			t.Errorf("%q: %d option claims, want %d", bullet, n, want)
		}
	}
}
