package main

import (
	"context"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/iostreams"
)

// TestVersion: perflog --version names the build and the Go version.
func TestVersion(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	root := newRootCmd(newFactory(io))
	root.SetArgs([]string{"--version"})
	root.SetOut(out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "perflog ") || !strings.Contains(got, ", go1.") {
		t.Fatalf("--version printed %q", got)
	}
	// the subcommand prints the same line
	io2, _, out2, _ := iostreams.Test()
	if code := run(context.Background(), newFactory(io2), []string{"version"}); code != 0 || out2.String() != out.String() {
		t.Fatalf("version: exit %d, %q; --version %q", code, out2, out)
	}
}
