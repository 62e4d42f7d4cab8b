package claims

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

func TestCheck(t *testing.T) {
	base := testfs.Revision("v0.11.0", testfs.Script)
	head := testfs.Revision("v0.13.0-cu130", strings.Replace(testfs.Script, "--max-num-seqs 256", "--max-num-seqs 128", 1)+
		"# VLLM_ONLY_IN_COMMENT is the workflow's\n")
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s),
		[]string{"configs/nvidia-master.yaml", "benchmarks/single_node/fixed_seq_len/k1_fp8_b200_vllm.sh"})
	for _, tc := range []struct {
		bullet string
		want   string // kind:verdict of each claim
	}{
		{"Update vLLM image from v0.11.0 to v0.13.0", "image:confirmed"},
		{"Update vLLM image from v0.10.0 to v0.13.0", "image:contradicted"},
		{"Image: vllm/vllm-openai:v0.12.0", "image:contradicted"},
		{"Image: lmsysorg/sglang:v0.5.9", "image:unverified"},
		// an image the clause opens with is what runs, whatever story follows
		{"Use vllm/vllm-openai:v0.12.0 with golden AL 2.78 for throughput", "image:contradicted"},
		{"Use the immutable vllm/vllm-openai:v0.12.0 image because the old tag is gone", "image:contradicted"},
		{"Use the immutable vllm/vllm-openai:v0.13.0-cu130 image because the old tag is gone", "image:confirmed"},
		{"Image vllm/vllm-openai:v0.12.0 (pushed 2026-07-27): a generic release cannot serve it", "image:contradicted"},
		{"Moving to vllm/vllm-openai:v0.12.0 crashed the server", "image:unverified"},
		{"Export VLLM_USE_X=1", "env:confirmed"},
		{"Export VLLM_USE_X=0", "env:contradicted"},
		{"Set VLLM_OTHER_THING=1", "env:contradicted"},
		{"Set VLLM_K1_SPECIAL_BACKEND=fast", "env:contradicted"},
		{"Set VLLM_K1_MSA_BACKEND=cutlass", "env:contradicted"},
		{"Add --max-num-seqs 128", "flag:confirmed"},
		// an option named without dashes, governed by a verb, states its value
		{"Pin max-num-seqs to 128 for both arms", "flag:confirmed"},
		{"Pin max-num-seqs to 64 for both arms instead of the default", "flag:contradicted"},
		// a name in a comment is not what runs
		{"Export VLLM_ONLY_IN_COMMENT", "env:contradicted"},
		// "throughput runs" is a kind of run, not a measurement
		{"Throughput runs pin the golden AL: VLLM_USE_X=0", "env:contradicted"},
		// a remark after ", which" is its own clause; the setting before it stands
		{"Sets VLLM_USE_X=0, which the upstream recipe requires and which this repo had never set", "env:contradicted"},
		// another file's setting, and a backend's name, are no claims
		{"Same mitigation as glm5_b300_sglang.sh's VLLM_USE_X=0", ""},
		{"Raise TP8's --max-num-seqs to 64", "parallel:confirmed flag:contradicted"}, // an arm's setting, not another file's
		{"Prefer the AITER path with TRITON_UNFUSED fallback", ""},
		{"Add --max-num-seqs 256", "flag:contradicted"},
		{"Add --enable-prefix-caching", "flag:contradicted"},
		{"Remove --enforce-eager", "flag:confirmed"},
		// options named without a verb are what the recipe passes
		{"Serve shape follows the B200 recipe (--kv-cache-dtype fp4)", "flag:contradicted"},
		{"Serve shape follows the B200 recipe (--kv-cache-dtype fp8)", "flag:confirmed"},
		{"Serve shape follows the B200 recipe (--enforce-eager)", "flag:contradicted"},
		{"Serve shape follows the B200 recipe (--kv-cache-dtype is unchanged)", "flag:confirmed"},
		{"Capture sizes are tokens: --kv-cache-dtype scaled to the batch", "flag:unverified"},
		// a plain word after an option is its value in a list of options
		{"Serve flags follow the recipe: --attention_config.k1_special_backend slow, --max-num-seqs 128", "flag:contradicted flag:confirmed"},
		{"Serve flags follow the recipe: --max-num-seqs 128, --attention_config.k1_special_backend slow.", "flag:confirmed flag:contradicted"},
		{"Serve flags follow the recipe: --max-num-seqs 128, --attention_config.k1_special_backend fast", "flag:confirmed flag:confirmed"},
		{"Notes: --attention_config.k1_special_backend slow, as the sibling does", "flag:unverified"},
		{"Adopting the rest at the same time -- max-num-seqs 32, --enforce-eager -- killed the engine with an assertion", ""}, // an aside of a story claims nothing
		{"Sweep TP8 conc 4-64", "parallel:confirmed conc:confirmed"},
		{"Sweep TP8 conc 4-128", "parallel:confirmed conc:contradicted"},
		{"Add TP4/EP4 DPA conc 64 and 128", "parallel:confirmed parallel:confirmed parallel:confirmed conc:confirmed"},
		{"Add TP4/EP4 conc 4", "parallel:confirmed parallel:confirmed conc:contradicted"},
		{"Add TP2 rows", "parallel:contradicted"},
		{"Run 1k1k", "seq-len:confirmed"},
		{"Run 8k1k", "seq-len:contradicted"},
	} {
		e := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{tc.bullet}, Lines: []int{3}, Line: 1}}
		var got []string
		for _, r := range Check(ch, e) {
			got = append(got, r.Kind+":"+r.Verdict)
			if r.Verdict == Contradicted && (r.Reason == "" || (len(r.Evidence) == 0 && r.Kind != KindEnv && r.Kind != KindFlag)) {
				t.Errorf("%q: contradicted without reason or evidence: %+v", tc.bullet, r)
			}
		}
		if strings.Contains(tc.bullet, "K1_SPECIAL") {
			if r := Check(ch, e); len(r) != 1 || !strings.Contains(r[0].Reason, "they set --attention_config.k1_special_backend fast instead") {
				t.Errorf("%q: no hint to the option set instead: %+v", tc.bullet, r)
			}
		}
		if strings.Contains(tc.bullet, "K1_MSA") {
			// the option inside a JSON argument, with its quotes whole
			if r := Check(ch, e); len(r) != 1 || !strings.Contains(r[0].Reason, `they set "k1_msa_backend": "cutlass" instead`) {
				t.Errorf("%q: no hint to the option set instead: %+v", tc.bullet, r)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: %s, want %s", tc.bullet, strings.Join(got, " "), tc.want)
		}
	}
}

// TestConcAcrossVariants: "conc X across A +/- B" holds only when every
// variant (A with and without B) runs X; a copied bullet that names a
// variant the change does not run is contradicted.
func TestConcAcrossVariants(t *testing.T) {
	recipe1 := `k1-fp8-b200-sglang:
  image: lmsysorg/sglang:v0.5.9
  model: m
  model-prefix: k1
  runner: b200
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - { tp: 8, kv-offloading: none, conc-list: [32, 48] }
      - { tp: 8, dp-attn: true, kv-offloading: none, conc-list: [48, 64] }
      - { tp: 8, kv-offloading: dram, kv-offload-backend: { name: hicache }, conc-list: [64] }
`
	files := testfs.Files{"configs/nvidia-master.yaml": recipe1, "configs/amd-master.yaml": "{}\n",
		"configs/runners.yaml": "labels:\n  b200: [b200-nb_0]\n", "runners/launch_b200-nb.sh": "#!/bin/bash\n"}
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", files, s), recipe.NewRev("head", files, s), []string{"configs/nvidia-master.yaml"})
	for _, tc := range []struct{ bullet, want, reason string }{
		{"Sweep conc=48 across TP8 +/- DPA", "confirmed", "each of the 2 variants runs conc 48"},
		{"Sweep conc=32 across TP8 +/- DPA", "contradicted", "no conc 32 in tp 8, dp-attn true"},
		{"Sweep conc=48 across TP8 +/- DPA +/- HiCache", "contradicted", "no conc 48 in tp 8, dp-attn false, with KV offloading"},
		{"Sweep conc=48 across TP8", "confirmed", ""},
	} {
		e := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-sglang"}, Bullets: []string{tc.bullet}, Lines: []int{3}, Line: 1}}
		var got *Result
		for _, r := range Check(ch, e) {
			if r.Kind == KindConc {
				got = &r
			}
		}
		if got == nil || got.Verdict != tc.want || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%q: %+v, want %s (%s)", tc.bullet, got, tc.want, tc.reason)
		}
		if got != nil && got.Verdict == Contradicted && len(got.Evidence) == 0 {
			t.Errorf("%q: no evidence", tc.bullet)
		}
	}
}

func TestNamedKeys(t *testing.T) {
	keys := []string{"glm5-fp4-b200-sglang", "glm5-fp4-b200-sglang-mtp", "glm5-fp8-b200-sglang"}
	for _, tc := range []struct {
		bullet string
		want   []string
	}{
		{"glm5-fp4-b200-sglang-mtp: override --mem-fraction-static from 0.85 to 0.8", []string{"glm5-fp4-b200-sglang-mtp"}},
		{"glm5-fp4-b200-sglang and glm5-fp8-b200-sglang: add --x", []string{"glm5-fp4-b200-sglang", "glm5-fp8-b200-sglang"}},
		{"Update the image", nil},
		{"glm5-fp4-b200-sglang-mtp, glm5-fp4-b200-sglang, glm5-fp8-b200-sglang: bump", nil}, // all: no narrowing
		{"xglm5-fp4-b200-sglang-mtpx: not a name", nil},
	} {
		if got := namedKeys(tc.bullet, keys); !slices.Equal(got, tc.want) {
			t.Errorf("namedKeys(%q) = %q, want %q", tc.bullet, got, tc.want)
		}
	}
}

// TestOptionAlias: an option the files pass under a name one word apart
// (SGLang's --fp8-gemm-backend for --fp8-gemm-runner-backend) leaves the
// claim unverified; one word of polarity apart is another option.
func TestOptionAlias(t *testing.T) {
	script := testfs.Script + "sglang serve --fp8-gemm-backend cutlass --enable-prefix-caching\n"
	files := testfs.Revision("v1", script)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", files, s), recipe.NewRev("head", files, s), []string{testfs.ScriptPath})
	for _, tc := range []struct{ bullet, want string }{
		{"Add --fp8-gemm-runner-backend cutlass", Unverified},
		{"Add --no-enable-prefix-caching", Contradicted},
		{"Add --fp8-gemm-other-thing cutlass", Contradicted},
	} {
		e := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{tc.bullet}, Lines: []int{3}, Line: 1}}
		r := Check(ch, e)
		if len(r) != 1 || r[0].Verdict != tc.want {
			t.Errorf("%q: %+v, want %s", tc.bullet, r, tc.want)
		}
	}
}

// TestRangeOfSequenceLengthsOnly: a range qualified by sequence lengths
// alone ("1k1k conc 4-64") speaks of every touched row of them, DP
// attention rows too (a parallelism it leaves unsaid is not "the plain
// rows").
func TestRangeOfSequenceLengthsOnly(t *testing.T) {
	base := testfs.Revision("v0.11.0", testfs.Script)
	head := testfs.Revision("v0.11.0", testfs.Script).With("configs/nvidia-master.yaml",
		strings.Replace(fmt.Sprintf(testfs.RecipeYAML, "v0.11.0"), "conc-list: [64, 128]", "conc-list: [64, 256]", 1))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	for bullet, want := range map[string]string{
		"Configs: 1k1k conc 4-64":  "seq-len:confirmed conc:contradicted",
		"Configs: 1k1k conc 4-256": "seq-len:confirmed conc:confirmed",
		"Configs: TP8 conc 4-64":   "parallel:confirmed conc:confirmed", // TP8 names the plain row
	} {
		var got []string
		for _, r := range Check(ch, []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{bullet}, Lines: []int{3}, Line: 1}}) {
			got = append(got, r.Kind+":"+r.Verdict)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q: %s, want %s", bullet, strings.Join(got, " "), want)
		}
	}
}

// TestSetClaimOfAReadVariable: "Set X" of a variable the files only read
// is not confirmed (reading sets nothing): contradicted when no point's
// workflow environment gives it either, unverified when one does (the
// workflow sets it, not the change); a bare mention of it is used.
func TestSetClaimOfAReadVariable(t *testing.T) {
	head := testfs.Revision("v0.11.0", testfs.Script+"echo \"$VLLM_READ_ME\" \"$MAX_MODEL_LEN\"\n")
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", testfs.Revision("v0.11.0", testfs.Script), s), recipe.NewRev("head", head, s), []string{testfs.ScriptPath})
	for bullet, want := range map[string]string{
		"Set VLLM_READ_ME":                   Contradicted,
		"Set MAX_MODEL_LEN":                  Unverified,
		"Reads VLLM_READ_ME from the runner": Confirmed,
	} {
		rs := Check(ch, []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{bullet}, Lines: []int{3}, Line: 1}})
		if len(rs) != 1 || rs[0].Verdict != want {
			t.Errorf("%q: %+v, want one %s", bullet, rs, want)
		}
	}
}

// launchedChange is an image bump of the sample recipe whose script is
// script at both revisions, run by its launcher: the claims read the dry
// run.
func launchedChange(script string) *recipe.Change {
	base := testfs.Revision("v0.11.0", script)
	head := testfs.Revision("v0.13.0", script)
	for _, f := range []testfs.Files{base, head} {
		f["runners/launch_b200-nb.sh"] = "#!/bin/bash\nbash " + testfs.ScriptPath + "\n"
	}
	s := &config.Settings{}
	return recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s),
		[]string{"configs/nvidia-master.yaml", testfs.ScriptPath})
}

// effectsByKey is a change's effects by recipe key.
func effectsByKey(t *testing.T, ch *recipe.Change) map[string]*recipe.Effect {
	t.Helper()
	effs, err := ch.Effects(context.Background(), dryrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	effects := map[string]*recipe.Effect{}
	for j := range effs {
		effects[effs[j].Key] = &effs[j]
	}
	return effects
}

// TestHiddenOptions: a server that passes options the dry run cannot read
// (flags printed by a program it does not run) may pass the one a bullet
// names: the launch does not decide its absence, the files do (here: no
// file passes it); a value stated wrong for an option it does show is
// still contradicted by the launch.
func TestHiddenOptions(t *testing.T) {
	hidden := strings.Replace(testfs.Script, "--max-num-seqs 256", `--max-num-seqs 256 $(python3 -c 'print("--x 1")')`, 1)
	ch := launchedChange(hidden)
	for bullet, want := range map[string]string{
		"Add --enable-prefix-caching":    "flag:contradicted passed by none of the files",
		"Remove --enable-prefix-caching": "flag:confirmed passed by none of the files",
		"Add --kv-cache-dtype fp4":       "flag:contradicted launches --kv-cache-dtype fp8",
	} {
		e := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{bullet}, Lines: []int{3}, Line: 1}}
		effects := effectsByKey(t, ch)
		var got []string
		for _, r := range CheckLaunched(context.Background(), ch, e, effects) {
			got = append(got, r.Kind+":"+r.Verdict)
			if kind, why, _ := strings.Cut(want, " "); r.Kind+":"+r.Verdict == kind && strings.Contains(r.Reason, why) {
				got[len(got)-1] = want
			} else {
				t.Logf("%q: %s", bullet, r.Reason)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q: %s, want %s", bullet, strings.Join(got, " "), want)
		}
	}
}

// TestHiddenEnv: a server that starts after an export of pairs a program
// printed may start with a variable a bullet names: the launch does not
// decide its absence, the files do; a variable it shows still decides.
func TestHiddenEnv(t *testing.T) {
	hidden := strings.Replace(testfs.Script, "export VLLM_USE_X=1", "export VLLM_USE_X=1\nfor p in $(python3 -c 'print(\"A_B=1\")'); do export \"$p\"; done", 1)
	ch := launchedChange(hidden)
	effects := effectsByKey(t, ch)
	for _, eff := range effects {
		for _, pt := range eff.Head {
			if pt.Launch == nil || len(pt.Launch.Servers) == 0 || len(pt.Launch.Servers[0].HiddenEnv) == 0 {
				t.Fatalf("the server does not say it may start with variables it cannot name: %+v", pt.Launch)
			}
		}
	}
	for bullet, launchDecides := range map[string]bool{
		"Remove VLLM_OLD_SETTING=1": false,
		"Set VLLM_USE_X=1":          true,
	} {
		e := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{bullet}, Lines: []int{3}, Line: 1}}
		for _, r := range CheckLaunched(context.Background(), ch, e, effects) {
			if fromLaunch := strings.Contains(r.Reason, "server"); fromLaunch != launchDecides {
				t.Errorf("%q: %s (%s): decided by the launch %v, want %v", bullet, r.Verdict, r.Reason, fromLaunch, launchDecides)
			}
		}
	}
}

// TestAboutAWorkersSetting: a claim about a variable or option is about
// the same setting of a multi-node worker ("decode X"), and a value
// written "empty" is the empty value.
func TestAboutAWorkersSetting(t *testing.T) {
	c := Claim{Kind: KindEnv, Name: "DISABLE_CUSTOM_ALL_REDUCE"}
	for name, want := range map[string]bool{"DISABLE_CUSTOM_ALL_REDUCE": true, "decode DISABLE_CUSTOM_ALL_REDUCE": true,
		"prefill DISABLE_CUSTOM_ALL_REDUCE": true, "decode OTHER": false, "--x DISABLE_CUSTOM_ALL_REDUCE": false} {
		if got := c.about(recipe.LaunchDiff{Kind: "env", Name: name}); got != want {
			t.Errorf("about %q: %v, want %v", name, got, want)
		}
	}
	for _, v := range []string{"", "empty", `""`, "''", "Empty"} {
		if !sameValue(v, "") {
			t.Errorf("%q is not the empty value", v)
		}
	}
	if sameValue("0", "empty") {
		t.Error(`"0" is the empty value`)
	}
}

// TestAbsentInANewRecipe: "X is omitted", "no X", "without X" say what
// the listed recipes run without, however new: a new recipe that launches
// X contradicts them. "Remove X" of a new recipe may be of the recipe it
// was copied from, and "no" reaches only the name right after it.
func TestAbsentInANewRecipe(t *testing.T) {
	head := testfs.Revision("v0.13.0", testfs.Script)
	head["runners/launch_b200-nb.sh"] = "#!/bin/bash\nbash " + testfs.ScriptPath + "\n"
	base := head.With("configs/nvidia-master.yaml", "{}\n")
	delete(base, testfs.ScriptPath)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s),
		[]string{"configs/nvidia-master.yaml", testfs.ScriptPath})
	effects := effectsByKey(t, ch)
	for _, tc := range []struct{ bullet, want string }{
		{"B200 needs no FP4 path, so --kv-cache-dtype is omitted", "flag:contradicted"},
		{"B200 needs no FP4 path, so --enforce-eager is omitted", "flag:confirmed"},
		{"Runs with CUDA graphs (no --kv-cache-dtype)", "flag:contradicted"},
		{"Runs with CUDA graphs (no --enforce-eager, VLLM_USE_X=1)", "flag:confirmed env:unverified"}, // not absent: "no" reaches --enforce-eager only
		{"Remove --kv-cache-dtype", "flag:unverified"},
	} {
		e := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{tc.bullet}, Lines: []int{3}, Line: 1}}
		var got []string
		for _, r := range CheckLaunched(context.Background(), ch, e, effects) {
			got = append(got, r.Kind+":"+r.Verdict)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: %s, want %s", tc.bullet, strings.Join(got, " "), tc.want)
		}
	}
}

// TestRowQualOneSide: a qualifier naming a side's parallelisms together
// ("dep8 decode": tp 8, ep 8, DP attention) matches a multi-node row only
// when one side has them all, not when they are spread over its sides.
func TestRowQualOneSide(t *testing.T) {
	on, off := true, false
	row := config.Row{TP: []int64{4, 8}, EP: []int64{4, 8}, DPA: []bool{true, false}, Workers: []int64{1, 5}} // DEP4 prefill, TEP8 decode
	for _, tc := range []struct {
		q    RowQual
		want bool
	}{
		{RowQual{TP: []int64{8}, EP: []int64{8}, DPA: &on}, false}, // dep8
		{RowQual{TP: []int64{8}, EP: []int64{8}, DPA: &off}, true}, // tep8
		{RowQual{TP: []int64{4}, EP: []int64{4}, DPA: &on}, true},  // dep4
		{RowQual{TP: []int64{8}}, true},
		{RowQual{TP: []int64{4}, EP: []int64{8}}, false},
	} {
		if got := tc.q.match(row); got != tc.want {
			t.Errorf("%s: match %v, want %v", tc.q.text(), got, tc.want)
		}
	}
}

// TestConditionWithoutBase: with only the head dry-run (the audit), a
// conditional setting that points outside the condition launch too is
// unverified, not confirmed: only the base tells whether the change gave
// it to them. With both sides (verify) it is contradicted.
func TestConditionWithoutBase(t *testing.T) {
	base := strings.Replace(testfs.Script, "--max-num-seqs 256", "--max-num-seqs 256 --gpu-memory-utilization 0.85", 1)
	head := "#!/bin/bash\nU=0.85\nif [[ \"$CONC\" -gt 16 ]]; then U=0.8; fi\n" +
		strings.Replace(testfs.Script, "--max-num-seqs 256", "--max-num-seqs 256 --gpu-memory-utilization $U", 1)
	ch := launchedChange(base)
	hf := testfs.Revision("v0.13.0", head).With("runners/launch_b200-nb.sh", "#!/bin/bash\nbash "+testfs.ScriptPath+"\n")
	ch = recipe.NewChange(ch.Base, recipe.NewRev("head", hf, &config.Settings{}), []string{"configs/nvidia-master.yaml", testfs.ScriptPath})
	entries := []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{"Set --gpu-memory-utilization from 0.85 to 0.8 when CONC>=64"}, Lines: []int{3}, Line: 1}}
	effs, err := ch.HeadEffects(context.Background(), []string{"k1-fp8-b200-vllm"}, dryrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	headOnly := map[string]*recipe.Effect{}
	for i := range effs {
		headOnly[effs[i].Key] = &effs[i]
	}
	for name, effects := range map[string]map[string]*recipe.Effect{"head only": headOnly, "both sides": effectsByKey(t, ch)} {
		want := Unverified
		if name == "both sides" {
			want = Contradicted
		}
		rs := CheckLaunched(context.Background(), ch, entries, effects)
		var got []Result
		for _, r := range rs {
			if r.Kind == KindFlag {
				got = append(got, r)
			}
		}
		if len(got) != 1 || got[0].Verdict != want || !strings.Contains(got[0].Reason, "conc 32") {
			t.Errorf("%s: %+v, want one %s naming the point of conc 32", name, got, want)
		}
	}
}

// TestSetOnlyWhereNothingRuns: an option or a variable "added" that only
// a changed benchmark script no launcher runs passes or sets is
// contradicted by the files; one a multi-node helper passes (a driver
// may reach it by a computed path) is not.
func TestSetOnlyWhereNothingRuns(t *testing.T) {
	s := &config.Settings{}
	for _, tc := range []struct {
		file string
		want string
	}{
		{"benchmarks/single_node/fixed_seq_len/k1_fp8_h100_vllm.sh", Contradicted},
		{"benchmarks/multi_node/amd_utils/server.sh", Confirmed},
	} {
		head := testfs.Revision("v0.11.0", testfs.Script).With(tc.file, "export VLLM_FAST=1\nvllm serve m --enable-fast-thing\n")
		ch := recipe.NewChange(recipe.NewRev("base", testfs.Revision("v0.11.0", testfs.Script), s), recipe.NewRev("head", head, s), []string{tc.file})
		for _, bullet := range []string{"Add --enable-fast-thing", "Set VLLM_FAST=1"} {
			rs := Check(ch, []Entry{{Index: 1, Keys: []string{"k1-fp8-b200-vllm"}, Bullets: []string{bullet}, Lines: []int{3}, Line: 1}})
			if len(rs) != 1 || rs[0].Verdict != tc.want {
				t.Errorf("%s in %s: %+v, want one %s", bullet, tc.file, rs, tc.want)
			}
		}
	}
}
