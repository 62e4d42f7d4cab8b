package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/iostreams"
)

// TestReportFlags: perflog report's flags reach its options (through the
// runF seam, nothing is run), and a bad one is a usage error.
func TestReportFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want ReportOptions
		err  string
	}{
		{args: nil, want: ReportOptions{Out: "perflog-report", HistoryFlags: HistoryFlags{Rev: "HEAD"}}},
		{args: []string{"--out", "site", "--key", "dsr1-*", "--launches", "--rev", "v1", "--no-index", "--offline", "--ignore-rev", "abc"},
			want: ReportOptions{Out: "site", Key: "dsr1-*", Launches: true,
				HistoryFlags: HistoryFlags{Rev: "v1", NoIndex: true, Offline: true, IgnoreRevs: []string{"abc"}}}},
		{args: []string{"--out", ""}, err: "--out must name a directory"},
		{args: []string{"extra"}, err: "takes no arguments"},
		{args: []string{"--format", "json"}, err: "unknown flag: --format"},
	} {
		io, _, _, _ := iostreams.Test()
		f := newFactory(io)
		var got *ReportOptions
		cmd := newReportCmd(f, func(_ context.Context, o *ReportOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{}, c.args...))
		cmd.SetOut(io.ErrOut)
		cmd.SetErr(io.ErrOut)
		err := cmd.Execute()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || got == nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if got.Out != c.want.Out || got.Key != c.want.Key || got.Launches != c.want.Launches || got.Rev != c.want.Rev ||
			got.NoIndex != c.want.NoIndex || got.Offline != c.want.Offline || !slices.Equal(got.IgnoreRevs, c.want.IgnoreRevs) {
			t.Errorf("%v: options %+v, want %+v", c.args, *got, c.want)
		}
	}
}
