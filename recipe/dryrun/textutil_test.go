package dryrun

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTextToolsAsCoreutils: each use textTool runs gives what the
// machine's own program gives on the same input (when it has them); a use
// it does not know, or an unknown input, is not run.
func TestTextToolsAsCoreutils(t *testing.T) {
	cases := []struct {
		name string
		args []string
		in   string
	}{
		{"sort", []string{"-n", "-u"}, "64\n8\n128\n8\n16\n"},
		{"sort", []string{"-nu"}, "4\n32\n4\n"},
		{"sort", []string{"-rn"}, "1\n10\n2\n"},
		{"sort", nil, "3\n1\n2\n"},
		{"uniq", nil, "a\na\nb\na\n"},
		{"paste", []string{"-sd,", "-"}, "1\n2\n3\n"},
		{"paste", []string{"-s", "-d", ":"}, "x\ny\n"},
		{"tr", []string{",", " "}, "1,2,3\n"},
		{"tr", []string{"-d", "\""}, "\"a\"\n"},
		{"cut", []string{"-d", ":", "-f", "2"}, "a:b:c\nd:e\nf\n"},
		{"cut", []string{"-d,", "-f1,3"}, "1,2,3\n4,5,6\n"},
		{"head", []string{"-n", "2"}, "1\n2\n3\n"},
		{"head", []string{"-1"}, "1\n2\n"},
		{"tail", []string{"-n1"}, "1\n2\n3\n"},
		{"seq", []string{"3"}, ""},
		{"seq", []string{"2", "2", "9"}, ""},
		{"seq", []string{"5", "-2", "1"}, ""},
		{"wc", []string{"-l"}, "a\nb\n"},
		{"paste", []string{"-sd,", "-"}, "1\n2\n3"}, // no final newline
	}
	for _, c := range cases {
		got, ok := textTool(c.name, c.args, []byte(c.in))
		if !ok {
			t.Errorf("%s %q: not run", c.name, c.args)
			continue
		}
		path, err := exec.LookPath(c.name)
		if err != nil {
			t.Logf("no %s here: not compared", c.name)
			continue
		}
		cmd := exec.Command(path, c.args...)
		cmd.Stdin = strings.NewReader(c.in)
		cmd.Env = []string{"LC_ALL=C"}
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %q: %v", c.name, c.args, err)
		}
		if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
			t.Errorf("%s %q on %q: %q, the real one %q", c.name, c.args, c.in, got, want)
		}
	}
	for _, c := range []struct {
		name string
		args []string
		in   string
	}{
		{"sort", []string{"-k2"}, "a b\n"},
		{"sort", nil, "b\na\n"}, // letters: the locale orders them
		{"tail", []string{"-f", "x.log"}, ""},
		{"head", []string{"file"}, ""},
		{"sort", []string{"-n"}, "8\n" + UnknownMarker + "grep>\n"},
		{"tr", []string{"a-z", "A-Z"}, "x\n"},
		{"paste", []string{"-sd", UnknownMarker + "x>"}, "1\n2\n"},
	} {
		if _, _, ok := textProgram(context.Background(), nil, c.name, c.args, []byte(c.in)); ok {
			t.Errorf("%s %q on %q: run, but it cannot be run exactly", c.name, c.args, c.in)
		}
	}
}

// TestDryRunTextPipeline: a value a script computes with a pipeline of
// its own values is launched exactly (was [<unknown:paste>]).
func TestDryRunTextPipeline(t *testing.T) {
	l := runScriptT(t, scriptHead+`
SIZES=(64 8 128 8 16)
CAPTURE=$(printf '%s\n' "${SIZES[@]}" | sort -n -u | paste -sd, -)
python3 -m sglang.launch_server --cuda-graph-bs "[$CAPTURE]" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("%s: %s", l.Status, l.Reason)
	}
	if v, _ := srv.Flag("--cuda-graph-bs"); !slices.Equal(v, []string{"[8,16,64,128]"}) {
		t.Errorf("--cuda-graph-bs %v", v)
	}
}

// TestDryRunSedOfAValue: a name a launcher derives from the image with
// sed (`$(echo "$IMAGE" | sed 's/[\/:@#]/_/g')`, 14 launchers) is the
// name, not unknown; sed on an unknown value stays unknown.
func TestDryRunSedOfAValue(t *testing.T) {
	l := runScriptT(t, scriptHead+`
IMAGE=lmsysorg/sglang:v0.5.9-rocm700
SQUASH=/data/$(echo "$IMAGE" | sed 's/[\/:@#]/_/g').sqsh
GPUS=$(nvidia-smi -L | sed 's/GPU/gpu/')
python3 -m sglang.launch_server --squash "$SQUASH" --gpus "$GPUS" > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	srv := l.Server()
	if srv == nil {
		t.Fatalf("%s: %s", l.Status, l.Reason)
	}
	if v, _ := srv.Flag("--squash"); !slices.Equal(v, []string{"/data/lmsysorg_sglang_v0.5.9-rocm700.sqsh"}) {
		t.Errorf("--squash %v", v)
	}
	if v, _ := srv.Flag("--gpus"); len(v) != 1 || !strings.Contains(v[0], UnknownMarker) {
		t.Errorf("--gpus %v: want unknown", v)
	}
}

// TestTextAroundUnknowns: a text program that only moves lines, joins
// them or swaps punctuation keeps each unknown value whole; one that could
// change it makes the whole output unknown.
func TestTextAroundUnknowns(t *testing.T) {
	u := func(n string) string { return UnknownMarker + n + ">" }
	in := []byte(u("a") + " " + u("b") + " " + u("c") + "\n")
	for _, tc := range []struct {
		name string
		args []string
		want string // "" when unknown
	}{
		{"sed", []string{"s/ /,/g"}, u("a") + "," + u("b") + "," + u("c") + "\n"},
		{"tr", []string{" ", ","}, u("a") + "," + u("b") + "," + u("c") + "\n"},
		{"sed", []string{"s/a/b/g"}, ""},
		{"sed", []string{"s/[ ]/,/g"}, ""},
		{"tr", []string{"a-z", "A-Z"}, ""},
		{"cut", []string{"-d:", "-f1"}, ""},
	} {
		out, _, ok := textProgram(context.Background(), nil, tc.name, tc.args, in)
		if got := string(out); (tc.want == "" && ok) || (tc.want != "" && got != tc.want) {
			t.Errorf("%s %q: %q (ok %v), want %q", tc.name, tc.args, got, ok, tc.want)
		}
	}
}
