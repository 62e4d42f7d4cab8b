package dryrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/testfs"
)

// hashed is a revision in memory that says what a path holds, as a git
// tree does (revfs.Hasher).
type hashed struct{ testfs.Files }

func (h hashed) PathID(p string, dir bool) string {
	if dir {
		var names []string
		for q := range h.Files {
			if rest, ok := strings.CutPrefix(q, p+"/"); ok {
				names = append(names, rest)
			}
		}
		sort.Strings(names)
		return strings.Join(names, "\n")
	}
	s, ok := h.Files[p]
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestMemoSignsCode: a helper whose change touches only functions the
// run never calls answers from the memo; any change the run could see
// (a called function, a top-level statement, a function that now shadows
// a command, the file read as text, functions listed or lines read) runs
// the point again.
func TestMemoSignsCode(t *testing.T) {
	const lib = "TOP=8\nused() { EXTRA=\"--x 1\"; }\nunused() { echo one; }\n"
	const script = "source \"$(dirname \"$0\")/lib.sh\"\nused\nvllm serve m --tp \"$TOP\" $EXTRA\n"
	rev := func(lib, script string) hashed {
		return hashed{testfs.Files{"benchmarks/lib.sh": lib, "benchmarks/run.sh": script, "benchmarks/list.sh": "declare -F >/dev/null\n"}}
	}
	env := map[string]string{"PATH": "/bin"}
	for _, c := range []struct {
		name        string
		before, lib string
		script      string
		runsAgain   bool
	}{
		{name: "an uncalled function", lib: strings.Replace(lib, "echo one", "echo two", 1)},
		{name: "an uncalled function added", lib: lib + "other() { :; }\n"},
		{name: "a comment between statements", lib: "# helpers\n" + lib},
		{name: "a called function", lib: strings.Replace(lib, "--x 1", "--x 2", 1), runsAgain: true},
		{name: "a top-level statement", lib: strings.Replace(lib, "TOP=8", "TOP=4", 1), runsAgain: true},
		{name: "a function that shadows a command", lib: lib + "vllm() { :; }\n", runsAgain: true},
		{name: "the file read as text", script: "cat \"$(dirname \"$0\")/lib.sh\" >/dev/null\n" + script,
			lib: strings.Replace(lib, "echo one", "echo two", 1), runsAgain: true},
		{name: "functions listed", before: lib + "declare -F >/dev/null\n",
			lib: lib + "declare -F >/dev/null\n" + "x() { :; }\n", runsAgain: true},
		{name: "functions listed by a file also read as text", script: "cat \"$(dirname \"$0\")/list.sh\" >/dev/null\nsource \"$(dirname \"$0\")/list.sh\"\n" + script,
			lib: lib + "x() { :; }\n", runsAgain: true},
		{name: "line numbers read", before: "unused() { echo one; }\nTOP=$LINENO\nused() { :; }\n",
			lib: "unused() {\n echo two\n}\nTOP=$LINENO\nused() { :; }\n", runsAgain: true},
		{name: "a source with arguments", script: strings.Replace(script, "lib.sh\"", "lib.sh\" a", 1),
			lib: strings.Replace(lib, "echo one", "echo two", 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, sc := lib, script
			if c.before != "" {
				before = c.before
			}
			if c.script != "" {
				sc = c.script
			}
			m := NewMemo()
			runs := 0
			dry := func(f fs.FS) *Launch {
				runs++
				return runHere(context.Background(), NewCache(), f, "benchmarks/run.sh", nil, env, Options{Timeout: 3 * time.Second}, true)
			}
			first := m.run(rev(before, sc), "benchmarks/run.sh", nil, env, shapeCache(), dry)
			if first.Status != StatusLaunched {
				t.Fatalf("first run %s: %s", first.Status, first.Reason)
			}
			second := m.run(rev(c.lib, sc), "benchmarks/run.sh", nil, env, shapeCache(), dry)
			if got := runs == 2; got != c.runsAgain {
				t.Fatalf("ran again: %v, want %v", got, c.runsAgain)
			}
			if !c.runsAgain && second != first {
				t.Fatalf("a memo hit gave another launch")
			}
			// what the memo answers is what a dry run of the new revision gives
			fresh := dry(rev(c.lib, sc))
			if a, b := launchLine(second), launchLine(fresh); a != b {
				t.Fatalf("memo %q, fresh dry run %q", a, b)
			}
		})
	}
}

// launchLine is a launch's status and servers' command lines.
func launchLine(l *Launch) string {
	out := l.Status
	for _, s := range l.Servers {
		out += "; " + strings.Join(s.Argv, " ")
	}
	return out
}
