package recipe

import (
	"slices"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
)

func TestScriptOptions(t *testing.T) {
	v := readVocab(`#!/bin/bash
# --commented-out is not passed
ARGS=(--max-num-seqs 8 --disable-radix-cache)
vllm serve "$MODEL" --tensor-parallel-size=$TP --kv-cache-dtype fp8 \
  --compilation-config '{"level": 3}' --x # --after-comment
echo "a--b-c"
`)
	got := v.names
	want := []string{"disable-radix-cache", "tensor-parallel-size", "kv-cache-dtype", "compilation-config"}
	// max-num-seqs is there too; options without a hyphen (--x) and
	// words that only contain "--" are not
	want = append([]string{"max-num-seqs"}, want...)
	if !slices.Equal(got, want) {
		t.Errorf("readVocab names = %q, want %q", got, want)
	}
	if v.engines != engineOf("vllm serve") {
		t.Errorf("readVocab engines = %b, want vLLM's only", v.engines)
	}
}

func TestRevOptions(t *testing.T) {
	files := testfs.Revision("v1", testfs.Script+"# --only-in-a-comment\n")
	files["runners/launch_b200-nb.sh"] = "srun --container-image x\n" // a launcher's option is not the server's
	for _, sweep := range []*SweepCache{nil, NewSweepCache()} {
		r := NewRev("head", files, &config.Settings{})
		if sweep != nil {
			r.UseSweepCache(sweep)
		}
		got := r.Options()
		if !got["max-num-seqs"] || !got["kv-cache-dtype"] || got["only-in-a-comment"] || got["container-image"] {
			t.Errorf("Options() = %v", got)
		}
		// the sample script starts vLLM: its options are vLLM's spelling
		if !r.SpelledBy("max-num-seqs", "vllm serve") || r.SpelledBy("max-num-seqs", "python3 -m sglang.launch_server") || r.SpelledBy("max-num-seqs", "mystery-server") {
			t.Errorf("SpelledBy: max-num-seqs is vLLM's only")
		}
	}
}
