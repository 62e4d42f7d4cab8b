package dryrun

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestGrepAgainstRealGrep: grep on known input prints and exits as the
// machine's grep does; what it does not run, it says so.
func TestGrepAgainstRealGrep(t *testing.T) {
	cases := []struct {
		args []string
		in   string
	}{
		{[]string{"-q", "[0-9]"}, ""},
		{[]string{"-q", "[0-9]"}, "1234\n"},
		{[]string{"-c", "gpu"}, "gpu0\ncpu\ngpu1\n"},
		{[]string{"-v", "^#"}, "# c\nx=1\n# d\ny=2\n"},
		{[]string{"-E", "-o", "[0-9]+"}, "tp8 ep16\nconc 64\n"},
		{[]string{"-o", `[0-9]\+`}, "tp8 ep16\n"},
		{[]string{"-i", "MI355"}, "mi355x\nmi300x\n"},
		{[]string{"-x", "-F", "a.b"}, "a.b\naxb\na.bc\n"},
		{[]string{"-w", "tp"}, "tp 8\ntpx\n"},
		{[]string{"-e", "a", "-e", "b"}, "a\nb\nc\n"},
		{[]string{"-qE", "^(sglang|vllm)$"}, "trt\n"},
		{[]string{"x"}, "no final newline x"},
	}
	grep, lookErr := exec.LookPath("grep")
	for _, c := range cases {
		got, status, ok := grepText(c.args, []byte(c.in))
		if !ok {
			t.Errorf("grep %q: not run", c.args)
			continue
		}
		if lookErr != nil {
			continue // no grep here: run, not compared
		}
		want, wantStatus := onMachine(t, grep, c.args, c.in)
		if string(got) != string(want) || status != wantStatus {
			t.Errorf("grep %q on %q: %q (exit %d), real grep %q (exit %d)", c.args, c.in, got, status, want, wantStatus)
		}
	}
	for _, args := range [][]string{{"-q", "x", "file"}, {"--count", "x"}, {"-P", `\d`}, {"-q", `\(a\)\1`}} {
		if _, _, ok := grepText(args, []byte("x\n")); ok {
			t.Errorf("grep %q: run, but it reads a file or an option it does not know", args)
		}
	}
}

// onMachine runs the machine's program on in: its output and exit status.
func onMachine(t *testing.T, prog string, args []string, in string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out, ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out, 0
}
