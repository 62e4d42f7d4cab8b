package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/perflog/perflog/internal/iostreams"
	"github.com/perflog/perflog/recipe/dryrun"
	"golang.org/x/tools/txtar"
)

// The hostile corpus (testdata/hostile): pull requests a stranger could
// open, each run through `config launch` and `changelog verify` (every
// format) with secrets in perflog's environment and its TMPDIR and HOME
// watched. No secret may reach any output, no file may appear anywhere,
// no output line may start a GitHub workflow command (but the github
// format's own), no markdown may link, embed or mention, each command
// ends in bounded time, and each payload gets the finding it documents.

const (
	hostileSecret  = "ghp_hostileTestSecret0123456789abcdef"
	hostileSecret2 = "AKIAhostileTestSecretTwo"
	hostilePR      = 77
)

// hostileRepo is a payload applied to the base repository, committed
// (unless it is a work tree's).
type hostileRepo struct {
	dir, watch string
	key        string
	meta       map[string][]string // the payload's header lines, by name
	worktree   bool
	// sandbox runs the payload's dry runs, in every command of its test:
	// confined workers of this binary, as perflog's (one set a payload,
	// not one a command: what each command would start is the same)
	sandbox *dryrun.Sandbox
}

func parseHeader(comment []byte) map[string][]string {
	m := map[string][]string{}
	for _, l := range strings.Split(string(comment), "\n") {
		if name, v, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(name, "#") && !strings.Contains(name, " ") {
			m[name] = append(m[name], v)
		}
	}
	return m
}

// buildHostile writes the base repository, commits it, applies the
// payload and commits it (or leaves it in the work tree).
func buildHostile(t *testing.T, payload string) *hostileRepo {
	t.Helper()
	base, err := txtar.ParseFile("../../testdata/hostile/base.txtar")
	if err != nil {
		t.Fatal(err)
	}
	bm := parseHeader(base.Comment)
	top := t.TempDir()
	h := &hostileRepo{dir: filepath.Join(top, "repo"), watch: filepath.Join(top, "watch"), key: bm["key"][0]}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h.sandbox = dryrun.Confined(false, exe, dryrun.WorkerArg)
	t.Cleanup(func() { h.sandbox.Close() })
	script := bm["script"][0]
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range base.Files {
		writeFile(t, filepath.Join(h.dir, f.Name), f.Data)
	}
	r, err := git.PlainInitWithOptions(h.dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	commitAll(t, r, "Add the k1 recipe (#1)", 1)
	// actions/checkout keeps the token in the checkout's .git/config
	cfg := filepath.Join(h.dir, ".git", "config")
	old, _ := os.ReadFile(cfg)
	writeFile(t, cfg, append(old, []byte("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+hostileSecret+"\n")...))

	applyPayload(t, h, payload, script)
	if h.worktree {
		return h
	}
	hash := commitAll(t, r, fmt.Sprintf("Tune k1 (#%d)", hostilePR), 2)
	if g := h.meta["gitlink"]; len(g) > 0 {
		gitlink(t, r, hash, strings.ReplaceAll(g[0], "@script", script))
	}
	return h
}

// applyPayload applies the payload at path to h's work tree (script is
// the file @script names), and fills h's watched directory (a secret, a
// program on $PATH).
func applyPayload(t *testing.T, h *hostileRepo, path, script string) {
	t.Helper()
	p, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.meta = parseHeader(p.Comment)
	h.worktree = len(h.meta["worktree"]) > 0
	if err := os.MkdirAll(filepath.Join(h.watch, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.watch, "bin", "hostonly"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(h.watch, ".secret"), []byte(hostileSecret), 0o600)
	expand := func(s string) string {
		s = strings.NewReplacer("@@CHECKOUT@@", h.dir, "@@HOME@@", h.watch, "@KEY", h.key, "@PR", strconv.Itoa(hostilePR)).Replace(s)
		if rep := h.meta["repeat"]; len(rep) > 0 {
			n, line, _ := strings.Cut(rep[0], " ")
			count, _ := strconv.Atoi(n)
			var b strings.Builder
			for i := range count {
				b.WriteString(strings.ReplaceAll(line, "@N", strconv.Itoa(i)) + "\n")
			}
			s = strings.Replace(s, "@@REPEAT@@\n", b.String(), 1)
		}
		return s
	}
	for _, f := range p.Files {
		name := strings.ReplaceAll(f.Name, "@script", script)
		data := expand(string(f.Data))
		switch {
		case name == "@entry":
			cl := filepath.Join(h.dir, "perf-changelog.yaml")
			old, _ := os.ReadFile(cl)
			writeFile(t, cl, append(append(old, '\n'), data...))
		case strings.HasPrefix(name, "@delete: "):
			if err := os.Remove(filepath.Join(h.dir, strings.TrimPrefix(name, "@delete: "))); err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(name, " ->"):
			link := filepath.Join(h.dir, strings.TrimSuffix(name, " ->"))
			os.Remove(link)
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(strings.TrimSpace(data), link); err != nil {
				t.Fatal(err)
			}
		default:
			writeFile(t, filepath.Join(h.dir, name), []byte(data))
		}
	}
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func commitAll(t *testing.T, r *git.Repository, msg string, n int) plumbing.Hash {
	t.Helper()
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Dev", Email: "dev@example.com", When: time.Date(2026, 7, 1, n, 0, 0, 0, time.UTC)}
	h, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// gitlink replaces the file at p in the head commit's tree by a submodule
// entry (amending the commit), as `git update-index --cacheinfo 160000`.
func gitlink(t *testing.T, r *git.Repository, head plumbing.Hash, p string) plumbing.Hash {
	t.Helper()
	c, err := r.CommitObject(head)
	if err != nil {
		t.Fatal(err)
	}
	var rewrite func(tr *object.Tree, parts []string) plumbing.Hash
	rewrite = func(tr *object.Tree, parts []string) plumbing.Hash {
		nt := &object.Tree{}
		for _, e := range tr.Entries {
			if e.Name == parts[0] {
				if len(parts) == 1 {
					e = object.TreeEntry{Name: e.Name, Mode: filemode.Submodule, Hash: plumbing.NewHash("1234567890123456789012345678901234567890")}
				} else {
					sub, err := r.TreeObject(e.Hash)
					if err != nil {
						t.Fatal(err)
					}
					e.Hash = rewrite(sub, parts[1:])
				}
			}
			nt.Entries = append(nt.Entries, e)
		}
		o := r.Storer.NewEncodedObject()
		if err := nt.Encode(o); err != nil {
			t.Fatal(err)
		}
		h, err := r.Storer.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	root, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	nc := *c
	nc.TreeHash = rewrite(root, strings.Split(p, "/"))
	o := r.Storer.NewEncodedObject()
	if err := nc.Encode(o); err != nil {
		t.Fatal(err)
	}
	h, err := r.Storer.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), h)); err != nil {
		t.Fatal(err)
	}
	return h
}

// runHostile runs perflog in this process as CI would, with secrets in
// its environment and its HOME and TMPDIR watched.
func runHostile(t *testing.T, h *hostileRepo, args ...string) (out, errOut string, took time.Duration) {
	t.Helper()
	env := map[string]string{"GITHUB_TOKEN": hostileSecret, "AWS_SECRET_ACCESS_KEY": hostileSecret2, "HOME": h.watch, "TMPDIR": h.watch,
		"PATH": filepath.Join(h.watch, "bin") + ":" + os.Getenv("PATH"), "NO_COLOR": "1", "GITHUB_ACTIONS": "true"}
	var o, e bytes.Buffer
	f := newFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &o, ErrOut: &e})
	f.Getenv = func(k string) string { return env[k] }
	f.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f.Getwd = func() (string, error) { return h.dir, nil }
	f.DryRun = dryrun.Options{Timeout: 5 * time.Second, Memory: 64 << 20, Sandbox: h.sandbox}
	if v := h.meta["timeout"]; len(v) > 0 {
		d, err := time.ParseDuration(v[0])
		if err != nil {
			t.Fatalf("timeout: %v", err)
		}
		f.DryRun.Timeout = d
	}
	start := time.Now()
	code := run(context.Background(), f, args)
	took = time.Since(start)
	if code == ExitError {
		t.Errorf("perflog %s: exit %d: %s", strings.Join(args, " "), code, e.String())
	}
	return o.String(), e.String(), took
}

var (
	// a line that starts a workflow command (the github format's own are
	// ::error/::warning/::notice with escaped data: checked apart)
	workflowCommand = regexp.MustCompile(`(?m)^\s*::`)
	githubLine      = regexp.MustCompile(`^::(error|warning|notice) [^\n]*::[^\n]*$`)
	// what markdown renders as a link, an image, a mention or HTML
	markdownActive = regexp.MustCompile(`\]\(|!\[|@octocat|<script`)
	codeSpan       = regexp.MustCompile("`[^`]*`")
	// perflog's own links: a code span to a file at head on GitHub
	ownLink = regexp.MustCompile("\\[`[^`]*`\\]\\(https://github\\.com/SemiAnalysisAI/InferenceX/blob/[0-9a-f]{40}/[^)\\s]*\\)")
)

func TestHostile(t *testing.T) {
	payloads, _ := filepath.Glob("../../testdata/hostile/*.txtar")
	var n int
	for _, p := range payloads {
		if filepath.Base(p) == "base.txtar" {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			// (the interpreter in this process, with secrets in the process's
			// environment: recipe/dryrun's TestHermetic)
			t.Parallel()
			h := buildHostile(t, p)
			before := listing(h.watch)
			check := func(what, out, errOut string, took time.Duration) {
				t.Helper()
				for _, s := range []string{hostileSecret, hostileSecret2, "root:x:0:0"} {
					if strings.Contains(out+errOut, s) {
						t.Errorf("%s: the output holds %q", what, s)
					}
				}
				if took > 20*time.Second {
					t.Errorf("%s took %v", what, took)
				}
				if i := strings.IndexFunc(out+errOut, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }); i >= 0 {
					t.Errorf("%s: a raw control character (%q)", what, (out + errOut)[max(0, i-40):min(len(out+errOut), i+20)])
				}
				if strings.HasSuffix(what, "github") {
					for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
						if l != "" && !githubLine.MatchString(l) {
							t.Errorf("%s: a line that is no annotation: %q", what, l)
						}
					}
				} else if m := workflowCommand.FindString(out + errOut); m != "" {
					t.Errorf("%s: a line starts a workflow command:\n%s", what, out+errOut)
				}
				if strings.HasSuffix(what, "markdown") {
					if m := markdownActive.FindString(codeSpan.ReplaceAllString(ownLink.ReplaceAllString(out, ""), "")); m != "" {
						t.Errorf("%s: markdown a reader's browser acts on (%q):\n%s", what, m, out)
					}
				}
			}
			var texts = map[string]string{}
			if !h.worktree && len(h.meta["launch"]) > 0 {
				for _, format := range []string{"text", "json"} {
					out, errOut, took := runHostile(t, h, "config", "launch", h.key, "--point", "1", "--format", format)
					check("config launch "+format, out, errOut, took)
					texts["launch "+format] = out
				}
			}
			formats := []string{"text", "json", "github", "markdown", "sarif"}
			if f := h.meta["formats"]; len(f) > 0 { // a budget's stop is the same in every format
				formats = strings.Fields(f[0])
			}
			for _, format := range formats {
				args := []string{"changelog", "verify", "--pr", strconv.Itoa(hostilePR), "--format", format}
				if h.worktree {
					args = append(args, "--worktree", "--base", "main")
				} else {
					args = append(args, "--base", "main~1", "--head", "main")
				}
				out, errOut, took := runHostile(t, h, args...)
				check("verify "+format, out, errOut, took)
				texts["verify "+format] = out
			}
			for _, want := range h.meta["launch"] {
				if !regexp.MustCompile("(?m)" + want).MatchString(texts["launch text"]) {
					t.Errorf("config launch: want %q in:\n%s", want, texts["launch text"])
				}
			}
			for _, want := range h.meta["verify"] {
				if !regexp.MustCompile("(?m)" + want).MatchString(texts["verify text"]) {
					t.Errorf("verify: want %q in:\n%s", want, texts["verify text"])
				}
			}
			if after := listing(h.watch); after != before {
				t.Errorf("files appeared in the watched HOME/TMPDIR:\n%s", after)
			}
			for _, p := range []string{"/tmp/perflog-pwned", "/tmp/sh-interp-pwned", filepath.Join(h.dir, "sh-interp-pwned"), filepath.Join(h.dir, "pwned")} {
				if _, err := os.Lstat(p); err == nil {
					os.Remove(p)
					t.Errorf("%s was created", p)
				}
			}
		})
	}
	if n < 15 {
		t.Fatalf("%d payloads in testdata/hostile", n)
	}
}

// listing names what is under dir.
func listing(dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return strings.Join(out, "\n")
}
