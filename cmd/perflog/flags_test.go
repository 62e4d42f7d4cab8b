package main

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/internal/iostreams"
)

// parseWith runs a command's flag and argument parsing through its runF
// seam (nothing is run) and returns the options it would run with.
func parseWith[T any](newCmd func(*Factory, func(context.Context, *T) error) *cobra.Command, args []string) (*T, error) {
	io, _, _, _ := iostreams.Test()
	var got *T
	cmd := newCmd(newFactory(io), func(_ context.Context, o *T) error { got = o; return nil })
	cmd.SetArgs(append([]string{}, args...)) // (never nil: cobra reads os.Args for nil)
	cmd.SetOut(io.ErrOut)
	cmd.SetErr(io.ErrOut)
	err := cmd.Execute()
	return got, err
}

// flagCase is one command line: want holds the option fields it must set
// (by name), err the usage error it must give instead.
type flagCase struct {
	args []string
	want map[string]any
	err  string
}

func checkFlags[T any](t *testing.T, name string, newCmd func(*Factory, func(context.Context, *T) error) *cobra.Command, cases []flagCase) {
	t.Helper()
	for _, c := range cases {
		got, err := parseWith(newCmd, c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %v: error %v, want %q", name, c.args, err, c.err)
			}
			continue
		}
		if err != nil || got == nil {
			t.Errorf("%s %v: %v", name, c.args, err)
			continue
		}
		v := reflect.ValueOf(got).Elem()
		for field, want := range c.want {
			f := v.FieldByName(field)
			if !f.IsValid() {
				t.Fatalf("%s: no option %s", name, field)
			}
			if !reflect.DeepEqual(f.Interface(), want) {
				t.Errorf("%s %v: %s = %#v, want %#v", name, c.args, field, f.Interface(), want)
			}
		}
	}
}

// TestCommandFlags: each command's flags and arguments reach its options,
// with their defaults, and a bad command line is a usage error, before
// anything runs.
func TestCommandFlags(t *testing.T) {
	checkFlags(t, "verify", newVerifyCmd, []flagCase{
		{args: nil, want: map[string]any{"Head": "HEAD", "Format": "text", "Profile": changelog.ProfileFull, "Claims": "contradicted", "PRSet": false}},
		{args: []string{"--base", "main", "--head", "HEAD~1", "--pr", "7", "--format", "sarif", "--profile", "gate", "--claims", "all", "--offline", "--repo", "r", "--config", "c.yaml"},
			want: map[string]any{"Base": "main", "Head": "HEAD~1", "PR": 7, "PRSet": true, "Format": "sarif", "Profile": changelog.ProfileGate,
				"Claims": "all", "Offline": true, "Repo": "r", "Config": "c.yaml"}},
		{args: []string{"--worktree"}, want: map[string]any{"Worktree": true}},
		{args: []string{"--format", "xml"}, err: "invalid --format"},
		{args: []string{"--claims", "some"}, err: "invalid --claims"},
		{args: []string{"--profile", "lax"}, err: "profile"},
		{args: []string{"--worktree", "--head", "x"}, err: "exclude each other"},
		{args: []string{"--pr", "-3"}, err: "invalid --pr"},
		{args: []string{"extra"}, err: "arg"},
	})
	checkFlags(t, "new", newNewCmd, []flagCase{
		{args: nil, want: map[string]any{"Format": "yaml", "DryRun": false, "PRSet": false}},
		{args: []string{"--base", "origin/main", "--pr", "12", "--dry-run", "--format", "json", "--offline"},
			want: map[string]any{"Base": "origin/main", "PR": 12, "PRSet": true, "DryRun": true, "Format": "json", "Offline": true}},
		{args: []string{"--format", "toml"}, err: "--format"},
		{args: []string{"extra"}, err: "arg"},
	})
	checkFlags(t, "audit", newAuditCmd, []flagCase{
		{args: []string{"--rev", "v1", "--no-index", "--ignore-rev", "abc", "--ignore-rev", "def"},
			want: map[string]any{"HistoryFlags": HistoryFlags{Rev: "v1", NoIndex: true, IgnoreRevs: []string{"abc", "def"}}}},
		{args: []string{"--format", "yaml"}, err: "--format"},
	})
	checkFlags(t, "blame", newBlameCmd, []flagCase{
		{args: []string{"k1-fp8-b200-vllm", "--no-launch", "--rev", "HEAD~2"}, want: map[string]any{"Key": "k1-fp8-b200-vllm", "NoLaunch": true}},
		{args: nil, err: "needs a config-key"},
		{args: []string{"a", "b"}, err: "arg"},
	})
	checkFlags(t, "log", newLogCmd, []flagCase{
		{args: []string{"k", "--path", "launch.flags.*", "--since", "2026-01-01"}, want: map[string]any{"Key": "k", "Path": "launch.flags.*", "Since": "2026-01-01"}},
		{args: nil, err: "needs a config-key"},
	})
	checkFlags(t, "diff", newProvDiffCmd, []flagCase{
		{args: []string{"k", "v1", "v2", "--bisect", "--point", "tp8 8k1k"}, want: map[string]any{"Key": "k", "A": "v1", "B": "v2", "Bisect": true, "Point": "tp8 8k1k"}},
		{args: []string{"k", "v1", "v2", "--point", "tp8"}, err: "--bisect"},
		{args: []string{"k"}, err: "needs revision A and revision B"},
	})
	checkFlags(t, "index", newIndexCmd, []flagCase{
		{args: nil, want: map[string]any{"Rev": "HEAD", "Launches": false}},
		{args: []string{"--rebuild", "--checks", "--launches", "--rev", "main"}, want: map[string]any{"Rebuild": true, "Checks": true, "Launches": true, "Rev": "main"}},
		{args: []string{"extra"}, err: "arg"},
	})
	checkFlags(t, "query", newQueryCmd, []flagCase{
		{args: []string{"SELECT 1", "--format", "json"}, want: map[string]any{"SQL": "SELECT 1", "Format": "json"}},
		{args: []string{"--schema"}, want: map[string]any{"Schema": true}},
		{args: nil, err: "needs an SQL statement"},
	})
	checkFlags(t, "lint", newLintCmd, []flagCase{
		{args: []string{"a.sh", "b.sh", "--rev", "HEAD", "--format", "json"}, want: map[string]any{"Paths": []string{"a.sh", "b.sh"}, "Rev": "HEAD", "Format": "json"}},
		{args: []string{"--format", "xml"}, err: "--format"},
	})
	checkFlags(t, "launch", newLaunchCmd, []flagCase{
		{args: []string{"k1-*", "k2", "--point", "3"}, want: map[string]any{"Keys": []string{"k1-*", "k2"}, "Point": 3, "Rev": "HEAD"}},
		{args: nil, err: "needs a config key"},
		{args: []string{"k1", "--point", "0"}, err: "invalid --point 0 (points are numbered from 1)"},
		{args: []string{"k1", "--point", "-2"}, err: "invalid --point -2"},
	})
}
