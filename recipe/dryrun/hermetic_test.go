package dryrun

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/testfs"
)

// The payloads a stranger's script can try on the machine that dry-runs
// it (testdata/hostile has them as whole pull requests, for the command
// line). Each runs in this process and in a spying worker (which dies
// on any file-system system call), with a secret in this process's
// environment and its TMPDIR and HOME watched: nothing of the machine
// reaches the launch, nothing is created, and the worker never dies.
var payloads = []struct {
	name, script string
	// want is in the server's flags; never is in no flag, variable or
	// unknown of the launch
	want  map[string]string
	never []string
}{
	{name: "tmpdir bypass", script: `export TMPDIR=@WATCH@
ln -s /proc/self/environ $TMPDIR/sh-interp-env
bash -c 'cat < $TMPDIR/sh-interp-env > /workspace/e'
E=$(cat /workspace/e); T=$(cat < $TMPDIR/sh-interp-env)
echo hacked > $TMPDIR/sh-interp-pwned; echo hacked > /tmp/sh-interp-pwned
vllm serve m --e "$E" --t "$T" --tmp "$TMPDIR" &
`, want: map[string]string{"--tmp": "@WATCH@", "--e": "", "--t": ""}},
	{name: "process substitutions everywhere", script: `source benchmarks/fifo.sh
trap 'cat <(:)' EXIT
bash -c 'cat <(:) >(cat)'
for i in {1..200}; do eval "cat <(:)"; done
X=$(cat < <(echo via-redirect))
vllm serve m --x "$X" --s "$SOURCED" &
`, want: map[string]string{"--x": "via-redirect", "--s": "/dev/null"}},
	{name: "host facts", script: `source benchmarks/benchmark_lib.sh; T=$(type hostonly); hash hostonly; C=$(command -V hostonly)
vllm serve m --uid "$UID" --euid "$EUID" --home ~root --nobody ~nobody --tool "$(command -v hostonly)" \
  --type "$T" --cv "$C" --py "$(command -v python3)" --own "$([[ -O /etc/passwd ]] && echo yes)" \
  --test-own "$(test -O /etc/passwd && echo yes)" --fn "$(command -v check_env_vars)" --home-var "$HOME" &
`, want: map[string]string{"--uid": "0", "--euid": "0", "--home": "/root", "--nobody": "/home/nobody",
		"--tool": "/usr/bin/hostonly", "--type": "hostonly is /usr/bin/hostonly", "--cv": "hostonly is /usr/bin/hostonly",
		"--py": "/usr/bin/python3", "--own": "yes", "--test-own": "yes", "--fn": "check_env_vars", "--home-var": "/root"}},
	{name: "tilde names", script: `echo ~!x & wait
{ echo ~+/a; echo ~a.b-c/d; } & wait
B=$(echo ~!x); P=$(echo ~%/p)
vllm serve m --bang "$B" --pct "$P" &
`, want: map[string]string{"--bang": "/home/!x", "--pct": "/home/%/p"}},
	{name: "wrapped lookups", script: `A=$(command type hostonly); B=$(builtin type hostonly); C=$(command command -v hostonly)
D=$(builtin hash -t hostonly 2>&1); command type 0 >/dev/null 2>&1
vllm serve m --a "$A" --b "$B" --c "$C" &
`, want: map[string]string{"--a": "hostonly is /usr/bin/hostonly", "--b": "hostonly is /usr/bin/hostonly", "--c": "/usr/bin/hostonly"}},
	{name: "reads", script: `A=$(cat /etc/passwd); B=$(< /proc/self/environ); C=$(cat /proc/1/environ)
D=$(echo /etc/*); cd /etc && E=$(echo *) && cd - >/dev/null
source /etc/os-release 2>/dev/null; F="${ID:-}"; G=$(cat ~/.secret @WATCH@/secret)
mapfile -t H < /etc/hostname; read -r I < /proc/self/environ
vllm serve m --a "$A" --b "$B" --c "$C" --d "$D" --e "$E" --f "$F" --g "$G" --h "${H[*]}" --i "$I" &
`, want: map[string]string{"--a": "", "--b": "", "--c": "", "--d": "/etc/*", "--g": ""}},
	{name: "writes and executions", script: `echo x > @WATCH@/w1; echo x >> @WATCH@/.bashrc; mkdir -p @WATCH@/dir
touch @WATCH@/t; exec 3>@WATCH@/fd; echo y >&3; tee -a @WATCH@/tee <<<"z" >/dev/null
cp /etc/passwd @WATCH@/cp; ln -s /etc/passwd @WATCH@/ln; mkfifo @WATCH@/fifo
/bin/touch @WATCH@/exec; python3 -c "open('@WATCH@/py','w')"; env bash -c 'echo q > @WATCH@/env'
sh -c 'echo q > @WATCH@/sh'; eval 'echo q > @WATCH@/eval'; (echo q > @WATCH@/sub) &
vllm serve m &
exec /usr/bin/touch @WATCH@/exec2
`},
	{name: "awk", script: `A=$(awk 'BEGIN { getline l < "/etc/passwd"; print l }'); B=$(awk 'BEGIN { print ENVIRON["GITHUB_TOKEN"] "x" }')
awk 'BEGIN { print "x" > "@WATCH@/awk"; system("touch @WATCH@/awk2"); print "y" | "tee @WATCH@/awk3" }'
C=$(echo 1 | awk '{ print $1 + 1 }')
vllm serve m --a "$A" --b "$B" --c "$C" &
`, want: map[string]string{"--b": "x", "--c": "2"}},
	{name: "the environment", script: `ALL=$(env; printenv; declare -p; export -p; set)
vllm serve m --all "$ALL" --names "x${!PERFLOG*}${!GITHUB*}x" --tok "${GITHUB_TOKEN:-none}" &
`, want: map[string]string{"--tok": "none", "--names": "xx"}},
}

const secret = "ghp_perflogTestSecret0123456789"

// watched returns a directory to watch and points this process's TMPDIR
// and HOME at it (with a secret and a program in it to find).
func watched(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	t.Setenv("HOME", dir)
	t.Setenv("GITHUB_TOKEN", secret)
	t.Setenv("PERFLOG_SECRET", secret)
	t.Setenv("PATH", dir+"/bin:"+os.Getenv("PATH"))
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "hostonly"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, ".secret"), []byte(secret), 0o600)
	os.WriteFile(filepath.Join(dir, "secret"), []byte(secret), 0o600)
	return dir
}

// listing names what is under dir.
func listing(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return out
}

func TestHermetic(t *testing.T) {
	dir := watched(t)
	before := listing(t, dir)
	for _, mode := range []string{"in this process", "in a spying worker"} {
		sb := InProcess()
		if mode != "in this process" {
			sb = confined(t, true)
		}
		for _, p := range payloads {
			t.Run(mode+"/"+p.name, func(t *testing.T) {
				script := strings.ReplaceAll(p.script, "@WATCH@", dir)
				files := testfs.Files{"benchmarks/benchmark_lib.sh": lib, "run.sh": script,
					"benchmarks/fifo.sh": "SOURCED=$(echo <(:))\nwhile read -r l; do :; done < <(echo a)\n"}
				start := time.Now()
				l := sb.Run(context.Background(), files, "run.sh", nil, map[string]string{"PATH": "/usr/bin:/bin"}, Options{Timeout: 5 * time.Second})
				if d := time.Since(start); d > 6*time.Second {
					t.Errorf("took %v", d)
				}
				srv := l.Server()
				if srv == nil {
					t.Fatalf("no server: %s %s %+v", l.Status, l.Reason, l.Unknowns)
				}
				for name, want := range p.want {
					want = strings.ReplaceAll(want, "@WATCH@", dir)
					got, _ := srv.Flag(name)
					if strings.Join(got, " ") != want {
						t.Errorf("%s %q, want %q", name, got, want)
					}
				}
				all := l.Reason
				for _, c := range append(append(l.Servers, l.Routers...), l.Clients...) {
					all += strings.Join(c.Argv, "\n")
					for k, v := range c.Env {
						all += k + "=" + v + "\n"
					}
				}
				for _, u := range l.Unknowns {
					all += u.What + "\n"
				}
				for _, never := range []string{secret, "root:x:0:0", "/nonexistent", dir + "/bin/hostonly", "PERFLOG_SECRET", "GITHUB_TOKEN="} {
					if strings.Contains(all, never) {
						t.Errorf("the launch holds %q", never)
					}
				}
			})
		}
		if st := sb.Stats(); st.Died+st.Killed > 0 {
			t.Errorf("%s: workers stopped: %+v", mode, st)
		}
		sb.Close()
	}
	if after := listing(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("files appeared: %q", after)
	}
	for _, p := range []string{"/tmp/sh-interp-pwned"} {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was created", p)
		}
	}
}

// TestBudgets: what would exhaust the machine stops at its budget, in
// bounded time, unknown with the reason; the worker that ran it is
// replaced, and a run beside it is not harmed.
func TestBudgets(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the worker's limits are Linux's")
	}
	sb := confined(t, false)
	files := func(script string) testfs.Files {
		return testfs.Files{"benchmarks/benchmark_lib.sh": lib, "run.sh": script}
	}
	serve := "vllm serve m --tp 8 &\n"
	// (the memory bombs get a time budget a loaded machine cannot reach
	// first; the CPU burners a short one)
	for _, c := range []struct {
		name, script, why string
		timeout           time.Duration
	}{
		{"a doubled string", "X=aaaaaaaaaa; for i in {1..40}; do X=$X$X; done\n" + serve, "memory", 30 * time.Second},
		{"one multiplying expansion", "X=" + strings.Repeat("a", 200) + "\nX=${X//?/$X}; X=${X//?/$X}; X=${X//?/$X}\n" + serve, "budget", time.Second},
		{"a fork bomb", "f(){ f | f & }; f\n" + serve, "", 300 * time.Millisecond},
		{"a busy loop", "for ((i=0; i>=0; i++)); do Y=$i; done\n" + serve, "time", 300 * time.Millisecond},
		{"the step budget", "for i in {1..1000}; do for j in {1..1000}; do true; done; done\n" + serve, "steps", 5 * time.Second},
		{"a huge script", strings.Repeat("export VAR_1=1\n", 80000) + serve, "KiB", time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			var wg sync.WaitGroup
			var beside *Launch
			wg.Add(1)
			go func() { // an innocent run beside it
				defer wg.Done()
				beside = sb.Run(context.Background(), files(serve), "run.sh", nil, nil, Options{Timeout: 5 * time.Second})
			}()
			l := sb.Run(context.Background(), files(c.script), "run.sh", nil, nil, Options{Timeout: c.timeout, Memory: 64 << 20})
			wg.Wait()
			if d := time.Since(start); d > c.timeout+10*time.Second {
				t.Errorf("took %v", d)
			}
			if l.Status != StatusUnknown || len(l.Servers) > 0 {
				t.Errorf("status %s (%s), servers %d: want unknown", l.Status, l.Reason, len(l.Servers))
			}
			if !strings.Contains(l.Reason, c.why) {
				t.Errorf("reason %q, want %q", l.Reason, c.why)
			}
			if beside.Status != StatusLaunched {
				t.Errorf("the run beside it: %s (%s)", beside.Status, beside.Reason)
			}
		})
	}
	t.Logf("%+v", sb.Stats())
}

// TestMemoryInAProcessThatHoldsMore: in a process that holds more than
// a run's budget (a long command's caches, a test's memo), a run's
// memory is what the heap grew by: a plain run launches, and a memory
// bomb still stops.
func TestMemoryInAProcessThatHoldsMore(t *testing.T) {
	held := make([][]byte, 96)
	for i := range held {
		held[i] = make([]byte, 1<<20)
		held[i][0] = 1
	}
	runtime.GC() // the held megabytes are live
	sb := InProcess()
	files := func(script string) testfs.Files {
		return testfs.Files{"benchmarks/benchmark_lib.sh": lib, "run.sh": script}
	}
	serve := "vllm serve m --tp 8 &\n"
	busy := "for i in {1..3000}; do Y=$i; done\n" + serve // long enough to be watched
	if l := sb.Run(context.Background(), files(busy), "run.sh", nil, nil, Options{Memory: 64 << 20}); l.Status != StatusLaunched {
		t.Errorf("a plain run in a process holding 96 MiB, at a 64 MiB budget: %s (%s)", l.Status, l.Reason)
	}
	bomb := "X=aaaaaaaaaa; for i in {1..40}; do X=$X$X; done\n" + serve
	if l := sb.Run(context.Background(), files(bomb), "run.sh", nil, nil, Options{Memory: 64 << 20, Timeout: 30 * time.Second}); l.Status != StatusUnknown || !strings.Contains(l.Reason, "memory") {
		t.Errorf("a doubled string: %s (%s), want unknown for its memory", l.Status, l.Reason)
	}
	runtime.KeepAlive(held)
}

// TestStoppedBudget: once a sandbox's runs have spent its budget on runs
// a budget stopped, the next runs are unknown at once, whatever they are:
// a never-ending loop in a helper every point sources costs a command
// StoppedBudget, not 5 s a point.
func TestStoppedBudget(t *testing.T) {
	sb := InProcess()
	sb.stoppedLimit = 500 * time.Millisecond
	files := testfs.Files{"run.sh": "for ((i=0; i>=0; i++)); do Y=$i; done\nvllm serve m --tp 8 &\n"}
	start := time.Now()
	var stopped, refused int
	for range 20 {
		l := sb.Run(context.Background(), files, "run.sh", nil, nil, Options{Timeout: 200 * time.Millisecond})
		switch {
		case l.Status != StatusUnknown:
			t.Fatalf("a never-ending loop: %s %s", l.Status, l.Reason)
		case strings.HasPrefix(l.Reason, "not run: this command's dry runs already spent 500ms"):
			refused++
		case strings.Contains(l.Reason, "time budget"):
			stopped++
		default:
			t.Fatalf("unknown for another reason: %s", l.Reason)
		}
	}
	if stopped < 2 || stopped > 4 || refused != 20-stopped {
		t.Errorf("%d runs stopped at the time budget, %d refused; want 3 or so stopped, the rest refused", stopped, refused)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("20 runs took %v", d)
	}
	// an innocent script is refused too: the sandbox cannot tell
	l := sb.Run(context.Background(), testfs.Files{"run.sh": "vllm serve m &\n"}, "run.sh", nil, nil, Options{})
	if l.Status != StatusUnknown || !strings.HasPrefix(l.Reason, "not run:") {
		t.Errorf("after the budget: %s %s", l.Status, l.Reason)
	}
}

// TestStoppedBudgetAmongGoodRuns: stopped runs that add up past the
// budget among many more good ones (a history walk) do not stop the rest.
func TestStoppedBudgetAmongGoodRuns(t *testing.T) {
	sb := InProcess()
	sb.stoppedLimit = 300 * time.Millisecond
	loop := testfs.Files{"run.sh": "for ((i=0; i>=0; i++)); do Y=$i; done\nvllm serve m &\n"}
	good := testfs.Files{"run.sh": "for i in {1..3000}; do Y=$i; done\nvllm serve m &\n"}
	for range 3 { // good runs first: more time than the stopped ones will take
		for {
			if l := sb.Run(context.Background(), good, "run.sh", nil, nil, Options{}); l.Status != StatusLaunched {
				t.Fatalf("a good run: %s %s", l.Status, l.Reason)
			}
			if time.Duration(sb.spent.Load()) > time.Second {
				break
			}
		}
		sb.Run(context.Background(), loop, "run.sh", nil, nil, Options{Timeout: 150 * time.Millisecond})
	}
	if time.Duration(sb.stopped.Load()) < sb.stoppedLimit {
		t.Fatalf("stopped %v, want past the limit", time.Duration(sb.stopped.Load()))
	}
	if l := sb.Run(context.Background(), good, "run.sh", nil, nil, Options{}); l.Status != StatusLaunched {
		t.Errorf("after %v stopped among %v: %s %s", time.Duration(sb.stopped.Load()), time.Duration(sb.spent.Load()), l.Status, l.Reason)
	}
}
