package dryrun

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestAwkAgainstRealAwk: awk on known input prints and exits as the
// machine's awk does; what would reach outside the run (system(), a
// file, a pipe) is not run.
func TestAwkAgainstRealAwk(t *testing.T) {
	cases := []struct {
		args []string
		in   string
	}{
		{[]string{"-v", "s=270", "-v", "cap=270", "BEGIN { exit !(s <= 0 || s > cap) }"}, ""},
		{[]string{"-v", "s=300", "-v", "cap=270", "BEGIN { exit !(s <= 0 || s > cap) }"}, ""},
		{[]string{"{print $NF}"}, "MEC firmware 177\nother 12\n"},
		{[]string{"-F", ":", "{print $2}"}, "a:b:c\nd:e\n"},
		{[]string{"-F:", "NR==2 {print $1}"}, "a:b\nc:d\n"},
		{[]string{"{s += $1} END {print s}"}, "1\n2\n3.5\n"},
		{[]string{`BEGIN { printf "%d\n", 1.9 * 4 }`}, ""},
		{[]string{"-v", "x=3", `BEGIN { print int(x / 2), x % 2 }`}, ""},
		{[]string{"/gpu/ {n++} END {print n+0}"}, "gpu0\ncpu\ngpu1\n"},
		{[]string{"{print toupper($0)}", "OFS=-"}, "ab cd\n"},
	}
	real, lookErr := exec.LookPath("awk")
	for _, c := range cases {
		got, status, ok := awkProgram(context.Background(), c.args, []byte(c.in), nil)
		if !ok {
			t.Errorf("awk %q: not run", c.args)
			continue
		}
		if lookErr != nil {
			continue
		}
		want, wantStatus := onMachine(t, real, c.args, c.in)
		if string(got) != string(want) || status != wantStatus {
			t.Errorf("awk %q on %q: %q (exit %d), real awk %q (exit %d)", c.args, c.in, got, status, want, wantStatus)
		}
	}
	// ENVIRON is the script's, never perflog's
	t.Setenv("PERFLOG_AWK_SECRET", "leak")
	got, _, ok := awkProgram(context.Background(), []string{`BEGIN { print ENVIRON["PERFLOG_AWK_SECRET"] "|" ENVIRON["MODEL"] }`}, nil, []string{"MODEL", "m"})
	if !ok || string(got) != "|m\n" {
		t.Errorf("ENVIRON: %q (ok %v)", got, ok)
	}
	for _, args := range [][]string{
		{"{print}", "/etc/passwd"},
		{`BEGIN { system("id") }`},
		{`BEGIN { while (("id" | getline l) > 0) print l }`},
		{`BEGIN { getline l < "/etc/passwd"; print l }`},
		{`BEGIN { print "x" > "/tmp/perflog-awk-test" }`},
		{"-f", "prog.awk"},
	} {
		if out, _, ok := awkProgram(context.Background(), args, nil, nil); ok {
			t.Errorf("awk %q ran (%q): it reaches outside the run", args, out)
		}
	}
	start := time.Now()
	if _, _, ok := awkProgram(context.Background(), []string{"BEGIN { while (1) x++ }"}, nil, nil); ok || time.Since(start) > 3*awkTimeout {
		t.Errorf("an endless program: ok %v after %s", ok, time.Since(start))
	}
	if _, _, ok := awkProgram(context.Background(), []string{`BEGIN { while (1) print "xxxxxxxxxxxxxxxx" }`}, nil, nil); ok {
		t.Error("an endless printer ran")
	}
}
