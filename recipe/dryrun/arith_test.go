package dryrun

import (
	"os/exec"
	"strings"
	"testing"
)

// TestArithmeticWithAnUnknownIsUnknown: $((...)) reading a variable whose
// value is unknown (a job id from a stubbed salloc) is unknown, not the
// 40000 the interpreter computes from a 0; one whose variables are known
// gives what bash gives, and one that assigns keeps its effect.
func TestArithmeticWithAnUnknownIsUnknown(t *testing.T) {
	l := runScriptT(t, `JOB_ID=$(salloc --no-shell | grep -oP 'allocation \K[0-9]+')
PORT=$((40000 + (JOB_ID % 10000)))
vllm serve m --port $PORT --master-port "$(( ${JOB_ID} + 1 ))"
`, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("no server: %s %s", l.Status, l.Reason)
	}
	// a value bash would read as an expression of its own: unknown too
	l2 := runScriptT(t, "X='2+3'\nvllm serve m --n $((X * 2))\n", nil)
	if v, _ := l2.Server().Flag("--n"); len(v) != 1 || !strings.HasPrefix(v[0], UnknownMarker) {
		t.Errorf("--n %q from X='2+3'", v)
	}
	for _, f := range []string{"--port", "--master-port"} {
		if v, _ := srv.Flag(f); len(v) != 1 || !strings.HasPrefix(v[0], UnknownMarker) {
			t.Errorf("%s %q: a value from an unknown job id reads as known", f, v)
		}
	}

	// known values: what bash prints
	const known = `N=8; E=-4; H=0x10; i=0
: $((i++)); : $((i += 2))
echo $((N * 2)) "$((N / 3))" $(( N % 3 + ${N} )) $((E < 0 ? -E : E)) $((i)) $(( 2 ** 10 )) $((N > 4 && N < 16)) $((H + 1)) $((UNSET + 1))`
	want := "16 2 10 4 3 1024 1 17 1"
	if bash, err := exec.LookPath("bash"); err == nil {
		out, err := exec.Command(bash, "-c", known).Output()
		if err != nil {
			t.Fatal(err)
		}
		want = strings.TrimSpace(string(out))
	}
	l = runScriptT(t, known+"\nvllm serve m --out \"$("+strings.SplitN(known, "\n", 3)[2]+")\"\n", nil)
	if srv := l.Server(); srv == nil {
		t.Fatalf("no server: %s %s", l.Status, l.Reason)
	} else if v, _ := srv.Flag("--out"); len(v) != 1 || v[0] != want {
		t.Errorf("--out %q, bash prints %q", v, want)
	}
}
