package dryrun

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSedAgainstRealSed: the substitutions scripts write are run as GNU
// sed runs them (the machine's sed, when it has one, is the truth), and
// what perflog does not read is refused rather than guessed.
func TestSedAgainstRealSed(t *testing.T) {
	cases := []struct {
		args []string
		in   string
	}{
		{[]string{`s/[\/:@#]/_/g`}, "lmsysorg/sglang:v0.5.9-rocm700-mi35x\n"},
		{[]string{`s|nvcr.io/||`}, "nvcr.io/nvidia/dynamo:0.7.1\n"},
		{[]string{`s|nvcr.io/|nvcr.io#|`}, "nvcr.io/nvidia/dynamo:0.7.1\n"},
		{[]string{`s/#/\//g`}, "nvcr.io#nvidia#x\n"},
		{[]string{`s/[\/:@#]/+/g`}, "nvidia/dynamo:0.7.1@sha256:ab\n"},
		{[]string{"-n", `s/results_concurrency_\([0-9]*\)_.*/\1/p`}, "results_concurrency_64_gpus_8.json\nother\n"},
		{[]string{"-n", `s/.*_gen_\([0-9]*\).*/\1/p`}, "a_ctx_4_gen_12_x\n"},
		{[]string{`s/a\+/X/g`}, "caaab aab\n"},
		{[]string{`s/(x)/[&]/`}, "f(x) (x)\n"},
		{[]string{"-E", `s/(a|b)+/<\1>/g`}, "aab cab\n"},
		{[]string{"-e", `s/^/> /`}, "one\ntwo\n"},
		{[]string{`s/o/0/`}, "foo boo\n"},
		{[]string{`s/\./-/g`}, "1.2.3\n"},
		{[]string{`s/x*/-/g`}, "abc\n"},
	}
	sed, err := exec.LookPath("sed")
	for _, c := range cases {
		got, ok := sedScript(c.args, []byte(c.in))
		if !ok {
			t.Errorf("sed %q: not run", c.args)
			continue
		}
		if err != nil {
			continue // no sed here: run, not compared
		}
		cmd := exec.Command(sed, c.args...)
		cmd.Stdin = strings.NewReader(c.in)
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("sed %q: %v", c.args, err)
		}
		if string(got) != string(want) {
			t.Errorf("sed %q on %q: %q, real sed %q", c.args, c.in, got, want)
		}
	}
	for _, args := range [][]string{
		{`1d`}, {`s/a/b/`, "file"}, {`s/a/b/3`}, {`s/\(a\)\1/b/`}, {`s/a/b/w out`}, {"-i", `s/a/b/`}, {`/x/s/a/b/`}, {"-e", `s/a/b/`, "-e", `s/c/d/`},
	} {
		if out, ok := sedScript(args, []byte("aa\n")); ok {
			t.Errorf("sed %q ran (%q): want it refused", args, out)
		}
	}
}
