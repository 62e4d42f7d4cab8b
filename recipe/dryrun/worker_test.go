package dryrun

import (
	"fmt"
	"strings"
	"testing"
)

// TestStderrKeepsTheCause: a crash's first line (Go's "fatal error")
// survives however much goroutine dump follows it, and the last lines
// are kept too.
func TestStderrKeepsTheCause(t *testing.T) {
	var w tail
	fmt.Fprintf(&w, "fatal error: out of memory\n\nruntime stack:\n")
	for i := range 20000 {
		fmt.Fprintf(&w, "goroutine %d [running]:\n\truntime.throw(...)\n", i)
	}
	fmt.Fprintf(&w, "exit status 2 at the end\n")
	s := w.String()
	if !strings.HasPrefix(s, "fatal error: out of memory\n") {
		t.Errorf("the cause is lost: %.80q", s)
	}
	if !strings.HasSuffix(s, "exit status 2 at the end\n") {
		t.Errorf("the end is lost: %q", s[len(s)-80:])
	}
	if len(s) > tailHead+2*tailKeep+8 {
		t.Errorf("kept %d bytes", len(s))
	}
}
