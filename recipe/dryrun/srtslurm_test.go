package dryrun

import (
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testfs"
)

func TestDescribeSrt(t *testing.T) {
	const p = "r.yaml"
	l := Describe(testfs.Files{p: `
environment:
  COMMON: "1"
backend:
  type: vllm
  prefill_environment:
    COMMON: "2"
  vllm_config:
    prefill:
      enforce-eager: true
      disable-log-stats: false
      quantization: null
      numa-bind-nodes: [0, 1]
      speculative-config: {method: mtp, num_speculative_tokens: 3}
      max-num-seqs: 64
resources:
  prefill_nodes: 2
`}, p)
	if l.Status != StatusDescribed || len(l.Servers) != 1 {
		t.Fatalf("launch %+v", l)
	}
	s := l.Servers[0]
	got := strings.Join(s.Argv, " ")
	want := `vllm serve --enforce-eager --numa-bind-nodes 0 1 --speculative-config {"method":"mtp","num_speculative_tokens":3} --max-num-seqs 64`
	if got != want || s.Role != "prefill" || s.At != "r.yaml:9" {
		t.Fatalf("server %q at %s (%s)\nwant %q", got, s.At, s.Role, want)
	}
	if v, ok := s.Flag("--max-num-seqs"); !ok || v[0] != "64" {
		t.Fatalf("flags %+v", s.Flags)
	}
	if s.Env["COMMON"] != "2" {
		t.Fatalf("the role's environment wins over the file's: %v", s.Env)
	}
	if settings := s.Files[p+SettingsSuffix]; settings != "backend.type: vllm\nresources.prefill_nodes: 2\n" {
		t.Fatalf("settings %q", settings)
	}

	// a trtllm worker is given a config file, not options
	l = Describe(testfs.Files{p: "backend:\n  trtllm_config:\n    decode:\n      kv_cache_config:\n        dtype: fp8\n      max_batch_size: 8\n"}, p)
	if l.Status != StatusDescribed || l.Servers[0].Program() != "trtllm-serve" ||
		l.Servers[0].Files[p+" (decode)"] != "kv_cache_config.dtype: fp8\nmax_batch_size: 8\n" {
		t.Fatalf("trtllm %+v", l.Servers)
	}

	// what is not described is unknown, with the reason
	for _, tc := range []struct{ text, reason string }{
		{"backend: [", "does not parse"},
		{"- a\n- b\n", "is not a mapping"},
		{"backend:\n  type: mystery\n", `backend type "mystery"`},
		{"backend:\n  type: sglang\n", "no backend.sglang_config"},
		{"base: x\nzip_override_a: {}\nbackend:\n  sglang_config:\n    decode: {}\n", "variants perflog does not expand"},
	} {
		l := Describe(testfs.Files{p: tc.text}, p)
		if l.Status != StatusUnknown || !strings.Contains(l.Reason, tc.reason) {
			t.Errorf("%q: %s %q, want unknown: %s", tc.text, l.Status, l.Reason, tc.reason)
		}
	}
	if l := Describe(testfs.Files{}, p); l.Status != StatusUnknown || !strings.Contains(l.Reason, "cannot be read") {
		t.Fatalf("missing file: %+v", l)
	}
}
