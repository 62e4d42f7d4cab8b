package changelog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
)

// memFiles is a revision's tree in memory, by path.
type memFiles map[string]string

// Open opens a file or directory of m (as fstest.MapFS, which lists the
// directories its paths imply).
func (m memFiles) Open(name string) (fs.File, error) {
	fsys := fstest.MapFS{}
	for p, s := range m {
		fsys[p] = &fstest.MapFile{Data: []byte(s)}
	}
	return fsys.Open(name)
}

func (m memFiles) with(p, s string) memFiles {
	out := memFiles{}
	for k, v := range m {
		out[k] = v
	}
	out[p] = s
	return out
}

const testRecipe = `k1-fp8-b200-vllm:
  image: vllm/vllm-openai:%s
  model: m
  model-prefix: k1
  runner: b200
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
      - { tp: 4, ep: 4, dp-attn: true, conc-list: [64, 128] }
`

const testScript = `#!/bin/bash
source "$(dirname "$0")/../../benchmark_lib.sh"
export VLLM_USE_X=1
vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-num-seqs 256 \
  --kv-cache-dtype fp8 --attention_config.k1_special_backend fast \
  --compilation-config '{"level": 3, "k1_msa_backend": "cutlass"}'
`

func testRev(image, script string) memFiles {
	return memFiles{
		"configs/nvidia-master.yaml":                               fmt.Sprintf(testRecipe, image),
		"configs/amd-master.yaml":                                  "{}\n",
		"configs/runners.yaml":                                     "labels:\n  b200: [b200-nb_0]\n",
		"runners/launch_b200-nb.sh":                                "#!/bin/bash\n",
		"benchmarks/benchmark_lib.sh":                              "X=1\n",
		"benchmarks/single_node/fixed_seq_len/k1_fp8_b200_vllm.sh": script,
	}
}

// A change that adds more than MaxClaimEntries entries gets the claims of
// the first ones checked and one note for the rest; entries naming the
// same keys share their subject, so the check stays linear.
func TestClaimsCapped(t *testing.T) {
	base := testRev("v0.11.0", testScript)
	head := testRev("v0.13.0-cu130", testScript)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	var b strings.Builder
	for i := range MaxClaimEntries + 5 {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "- config-keys:\n    - k1-fp8-b200-vllm\n  description:\n    - \"Update vLLM image from v0.10.0 to v0.13.0\"\n  pr-link: %s%d\n", link, 7)
	}
	rep := Verify(&Input{Base: []byte{}, Head: []byte(b.String()), BaseRev: "base", HeadRev: "head", PR: 7, Change: ch, Settings: s,
		HeadMaster: func() (*config.Master, error) { return ch.Head.Master() }}, ProfileFull)
	capped, contradicted := 0, 0
	for _, f := range rep.Findings {
		switch f.Rule {
		case RuleClaimsCapped:
			capped++
			if !strings.Contains(f.Message, fmt.Sprintf("adds %d entries", MaxClaimEntries+5)) || f.Entry != MaxClaimEntries+1 {
				t.Errorf("note %+v", f)
			}
		case RuleContradicted:
			contradicted++
		}
	}
	if capped != 1 || contradicted != MaxClaimEntries {
		t.Fatalf("%d notes, %d contradictions; want 1 and %d", capped, contradicted, MaxClaimEntries)
	}
}

func TestCheckSize(t *testing.T) {
	if err := CheckSize("c", MaxFileSize); err != nil {
		t.Fatal(err)
	}
	if err := CheckSize("c", MaxFileSize+1); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "32 MiB") {
		t.Fatalf("%v", err)
	}
}

// A cancelled run stops: no claim is checked once the context is done.
func TestVerifyCancelled(t *testing.T) {
	base := testRev("v0.11.0", testScript)
	head := testRev("v0.13.0-cu130", testScript)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	entry := "- config-keys:\n    - k1-fp8-b200-vllm\n  description:\n    - \"Update vLLM image from v0.10.0 to v0.13.0\"\n  pr-link: " + link + "7\n"
	ctx, cancel := context.WithCancel(context.Background())
	in := &Input{Base: []byte{}, Head: []byte(entry), BaseRev: "base", HeadRev: "head", PR: 7, Change: ch, Settings: s,
		HeadMaster: func() (*config.Master, error) { return ch.Head.Master() }}
	if rep := Verify(in, ProfileFull); len(rep.Claims) == 0 {
		t.Fatal("no claim checked: the test tests nothing")
	}
	cancel()
	in.Ctx = ctx
	if rep := Verify(in, ProfileFull); len(rep.Claims) != 0 {
		t.Fatalf("claims checked after the cancel: %v", rep.Claims)
	}
}
