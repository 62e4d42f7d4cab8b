package main

import (
	"context"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/iostreams"
)

// TestFormatCompletionsAreAccepted: every --format value completion offers
// is one the command accepts.
func TestFormatCompletionsAreAccepted(t *testing.T) {
	t.Parallel()
	repo := "../../testdata/corpus/inferencex.git"
	args := map[string][]string{
		// (--profile gate: the formats are at stake, not the dry runs)
		"perflog changelog verify": {"--repo", repo, "--profile", "gate", "--base", "main~1", "--head", "main"},
		"perflog changelog new":    {"--repo", repo, "--base", "main~1", "--dry-run", "--offline"},
		"perflog changelog audit":  {"--repo", repo, "--no-index", "--key", "dsv4-fp4-b200-vllm"},
		"perflog changelog rules":  nil,
		// (--no-launch: the formats are at stake here, not the dry runs)
		"perflog provenance blame": {"--repo", repo, "--no-index", "--no-launch", "dsv4-fp4-b200-vllm"},
		"perflog provenance log":   {"--repo", repo, "--no-index", "--no-launch", "--since", "2026-08-20", "dsv4-fp4-b200-vllm"},
		"perflog provenance diff":  {"--repo", repo, "--no-index", "--no-launch", "dsv4-fp4-b200-vllm", "main~1", "main"},
		"perflog lint":             {"--repo", repo, "--rev", "main", "benchmarks/benchmark_lib.sh"},
		"perflog config scripts":   {"--repo", repo, "--rev", "main", "dsv4-fp4-b200-vllm"},
		"perflog config launch":    {"--repo", repo, "--rev", "main", "--point", "1", "dsv4-fp4-b200-vllm"},
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

// TestPager: a long listing on a terminal goes through $PAGER (here a
// filter that marks each line); --no-pager, PAGER=cat, a file or a pipe
// do without.
func TestPager(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		tty   bool
		args  []string
		paged bool
	}{
		{map[string]string{"PAGER": "sed s/^/P:/"}, true, nil, true},
		{map[string]string{"PAGER": "cat > /dev/null; echo never"}, true, []string{"--no-pager"}, false},
		{map[string]string{"PERFLOG_PAGER": "sed s/^/P:/", "PAGER": "false"}, true, nil, true},
		{map[string]string{"PAGER": "cat"}, true, nil, false},
		{map[string]string{"PAGER": "sed s/^/P:/"}, false, nil, false},
	} {
		io, _, out, _ := iostreams.Test()
		io.SetStdoutTTY(c.tty)
		f := newFactory(io)
		f.Getenv = func(k string) string { return c.env[k] }
		f.LookupEnv = func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		code := run(context.Background(), f, append([]string{"changelog", "rules", "--format", "tsv"}, c.args...))
		got := out.String()
		if code != 0 || strings.HasPrefix(got, "P:RULE") != c.paged || !strings.Contains(got, "RULE") {
			t.Errorf("%v tty %v %v: exit %d, paged %v, output %.40q", c.env, c.tty, c.args, code, strings.HasPrefix(got, "P:"), got)
		}
	}
}

func TestKeyList(t *testing.T) {
	keys := []string{"dsr1-fp4-b200-sglang", "dsr1-fp4-b200-trt", "dsr1-fp8-b200-sglang", "glm5-fp8-h200-sglang"}
	if got := keyList(keys, 0); got != strings.Join(keys, ", ") {
		t.Errorf("a pipe gets every key: %q", got)
	}
	got := keyList(keys, 60)
	if got != "dsr1-fp4-b200-sglang, ... and 3 more (4 keys)" && got != "dsr1-fp4-b200-sglang, dsr1-fp4-b200-trt, ... and 2 more (4 keys)" || len(got) > 60 {
		t.Errorf("summarised to 60: %q", got)
	}
	if got := keyList(keys[:1], 10); got != keys[0] {
		t.Errorf("one key is shown whole: %q", got)
	}
}
