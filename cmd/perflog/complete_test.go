package main

import (
	"strings"
	"testing"
)

// TestFormatCompletionsAreAccepted: every --format value completion offers
// is one the command accepts.
func TestFormatCompletionsAreAccepted(t *testing.T) {
	repo := "../../testdata/corpus/inferencex.git"
	args := map[string][]string{
		"perflog changelog verify": {"--repo", repo, "--base", "main~1", "--head", "main"},
		"perflog changelog new":    {"--repo", repo, "--base", "main~1", "--dry-run", "--offline"},
		"perflog changelog audit":  {"--repo", repo, "--no-index", "--key", "dsv4-fp4-b200-vllm"},
		"perflog changelog rules":  nil,
		"perflog provenance blame": {"--repo", repo, "--no-index", "dsv4-fp4-b200-vllm"},
		"perflog provenance log":   {"--repo", repo, "--no-index", "--since", "2026-08-20", "dsv4-fp4-b200-vllm"},
		"perflog provenance diff":  {"--repo", repo, "--no-index", "dsv4-fp4-b200-vllm", "main~1", "main"},
		"perflog lint":             {"--repo", repo, "--rev", "main", "benchmarks/benchmark_lib.sh"},
		"perflog config scripts":   {"--repo", repo, "--rev", "main", "dsv4-fp4-b200-vllm"},
		"perflog index":            nil, // writes an index: its values are checked by its own flag test
		"perflog query":            {"--schema"},
	}
	for path, values := range formats {
		a, ok := args[path]
		if !ok {
			t.Errorf("%s: no test arguments", path)
			continue
		}
		if path == "perflog index" {
			continue
		}
		for _, v := range values {
			cmd := append(strings.Fields(strings.TrimPrefix(path, "perflog ")), append([]string{"--format", v}, a...)...)
			code, _, errOut := runWith(t, nil, cmd...)
			if strings.Contains(errOut, "invalid --format") || code == ExitError {
				t.Errorf("%s --format %s: exit %d: %s", path, v, code, errOut)
			}
		}
	}
}
