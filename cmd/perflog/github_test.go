package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	git "github.com/go-git/go-git/v5"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/iostreams"
)

const testToken = "ghp_secret0123456789"

// fakeGitHub is an httptest server answering the REST calls perflog makes,
// in the shape GitHub answers them, and counting them.
type fakeGitHub struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
	// comments on issue 2707, with ids
	comments []map[string]any
	// status forces an error answer for every call (0: none)
	status  int
	headers map[string]string
	body    []byte // the last POST/PATCH body
	t       *testing.T
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{t: t}
	mux := http.NewServeMux()
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.calls = append(g.calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		status, headers := g.status, g.headers
		g.mu.Unlock()
		if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
			t.Errorf("Authorization header %q", got)
		}
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"message":"forced %d","documentation_url":"https://docs.github.com/rest"}`, status)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /repos/SemiAnalysisAI/InferenceX/commits/{sha}/pulls", func(w http.ResponseWriter, r *http.Request) {
		sha := r.PathValue("sha")
		json.NewEncoder(w).Encode([]map[string]any{
			{"number": 9, "state": "closed", "merge_commit_sha": "0000000000000000000000000000000000000000", "head": map[string]any{"sha": "1111111111111111111111111111111111111111"}},
			{"number": 2707, "state": "closed", "merged_at": "2026-11-30T10:00:00Z", "merge_commit_sha": sha, "head": map[string]any{"sha": "2222222222222222222222222222222222222222"}},
		})
	})
	mux.HandleFunc("GET /repos/SemiAnalysisAI/InferenceX/issues/2707/comments", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		// two pages: the first holds someone else's comment
		if r.URL.Query().Get("page") == "" {
			w.Header().Set("Link", fmt.Sprintf(`<%s/repos/SemiAnalysisAI/InferenceX/issues/2707/comments?page=2&per_page=100>; rel="next"`, g.URL))
			json.NewEncoder(w).Encode([]map[string]any{{"id": 1, "body": "LGTM"}})
			return
		}
		json.NewEncoder(w).Encode(g.comments)
	})
	mux.HandleFunc("POST /repos/SemiAnalysisAI/InferenceX/issues/2707/comments", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		var c map[string]any
		g.body, _ = io.ReadAll(r.Body)
		json.Unmarshal(g.body, &c)
		c["id"] = 100 + len(g.comments)
		c["html_url"] = fmt.Sprintf("https://github.com/SemiAnalysisAI/InferenceX/pull/2707#issuecomment-%d", c["id"])
		g.comments = append(g.comments, c)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(c)
	})
	mux.HandleFunc("PATCH /repos/SemiAnalysisAI/InferenceX/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.body, _ = io.ReadAll(r.Body)
		var c map[string]any
		json.Unmarshal(g.body, &c)
		var id int
		fmt.Sscan(r.PathValue("id"), &id)
		c["id"] = id
		c["html_url"] = "https://github.com/SemiAnalysisAI/InferenceX/pull/2707#issuecomment-" + r.PathValue("id")
		json.NewEncoder(w).Encode(c)
	})
	t.Cleanup(g.Close)
	return g
}

func (g *fakeGitHub) callList() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// corpusCopy copies the shipped corpus (a bare repository) so that a test
// may write its perflog/ cache.
func corpusCopy(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "inferencex.git")
	src := "../../testdata/corpus/inferencex.git"
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// runWith runs one perflog command line with the given environment.
func runWith(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	f := newFactory(io)
	f.Getenv = func(k string) string { return env[k] }
	f.DryRun.Sandbox = sharedSandbox()
	code := run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func TestGitHubPRLookupIsCachedAndOptional(t *testing.T) {
	t.Parallel()
	g := newFakeGitHub(t)
	repo := corpusCopy(t)
	env := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": g.URL}
	code, out, errOut := runWith(t, env, "changelog", "new", "--repo", repo, "--base", "main~1", "--dry-run", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res newResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.PR == nil || *res.PR != 2707 || !strings.Contains(errOut, "PR #2707 from GitHub") {
		t.Fatalf("PR = %v, stderr %q", res.PR, errOut)
	}
	if len(res.Entries) == 0 || res.Entries[0].PRLink != "https://github.com/SemiAnalysisAI/InferenceX/pull/2707" || res.Written {
		t.Fatalf("entries %+v written %v", res.Entries, res.Written)
	}
	if n := len(g.callList()); n != 1 {
		t.Fatalf("%d API calls, want 1: %v", n, g.callList())
	}
	// the answer is cached in the repository: asked once
	cache, err := os.ReadFile(filepath.Join(repo, "perflog", "github-prs.json"))
	if err != nil || !strings.Contains(string(cache), `"SemiAnalysisAI/InferenceX"`) || strings.Contains(string(cache), testToken) {
		t.Fatalf("cache %q, %v", cache, err)
	}
	if code, _, _ := runWith(t, env, "changelog", "new", "--repo", repo, "--base", "main~1", "--dry-run"); code != 0 || len(g.callList()) != 1 {
		t.Fatalf("second run: exit %d, calls %v", code, g.callList())
	}
	// no token, or --offline: never asked; the squash commit's subject
	// names the PR, as verify reads it
	for _, e := range []map[string]string{{"GITHUB_API_URL": g.URL}, env} {
		args := []string{"changelog", "new", "--repo", corpusCopy(t), "--base", "main~1", "--dry-run"}
		if e["GITHUB_TOKEN"] != "" {
			args = append(args, "--offline")
		}
		_, _, errOut := runWith(t, e, args...)
		if !strings.Contains(errOut, "PR #2707 from the head commit's subject") || len(g.callList()) != 1 {
			t.Fatalf("offline run asked GitHub (%v) or %q", g.callList(), errOut)
		}
	}
	// a range of more than one commit has no such subject: the placeholder
	_, _, errOut = runWith(t, env, "changelog", "new", "--repo", corpusCopy(t), "--base", "main~2", "--dry-run", "--offline")
	if !strings.Contains(errOut, "XXX placeholder") {
		t.Fatalf("two commits offline: %q", errOut)
	}
}

func TestGitHubFailuresFallBackOffline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status  int
		headers map[string]string
		want    string
	}{
		{401, nil, "GitHub refused the token (401 Unauthorized)"},
		{403, map[string]string{"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1900000000"}, "the rate limit is exhausted until"},
		{502, nil, "502"},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			g := newFakeGitHub(t)
			g.status, g.headers = tc.status, tc.headers
			env := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": g.URL}
			// offline, the PR comes from the squash commit's subject
			code, out, errOut := runWith(t, env, "changelog", "new", "--repo", corpusCopy(t), "--base", "main~1", "--dry-run")
			if code != 0 || !strings.Contains(out, "pull/2707") || !strings.Contains(errOut, "from the head commit's subject") {
				t.Fatalf("exit %d, out %q, stderr %q", code, out, errOut)
			}
			if strings.Count(errOut, "warning: GitHub is unavailable") != 1 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut+out, testToken) {
				t.Fatalf("stderr %q", errOut)
			}
		})
	}
	// a network failure: the server is gone
	g := newFakeGitHub(t)
	g.Close()
	_, _, errOut := runWith(t, map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": g.URL}, "changelog", "new", "--repo", corpusCopy(t), "--base", "main~1", "--dry-run")
	if strings.Count(errOut, "continuing offline") != 1 {
		t.Fatalf("stderr %q", errOut)
	}
}

func TestGitHubProvenanceResolverAskedOnce(t *testing.T) {
	g := newFakeGitHub(t)
	repo := corpusCopy(t)
	r, err := gitscan.Open(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	f.Getenv = func(k string) string {
		return map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": g.URL}[k]
	}
	ws := &workspace{repo: r}
	gh := newGitHub(f, ws, false)
	head, _ := r.Resolve("main")
	for i := 0; i < 3; i++ {
		if n, ok := gh.PR(context.Background(), head); !ok || n != 2707 {
			t.Fatalf("PR = %d, %v", n, ok)
		}
	}
	if len(g.callList()) != 1 {
		t.Fatalf("calls %v", g.callList())
	}
}

func TestVerifyCommentIsPostedThenUpdated(t *testing.T) {
	t.Parallel()
	g := newFakeGitHub(t)
	repo := corpusCopy(t)
	env := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": g.URL}
	args := []string{"changelog", "verify", "--repo", repo, "--base", "main~1", "--head", "main", "--pr", "2707", "--comment"}
	code, _, errOut := runWith(t, env, args...)
	if code != 0 || !strings.Contains(errOut, "posted the findings on PR #2707") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(string(g.body), commentMarker) || !strings.Contains(string(g.body), "perflog changelog verify: ✅ passed") {
		t.Fatalf("comment body %s", g.body)
	}
	// again: the comment on page 2 is found by its marker and edited
	if code, _, errOut := runWith(t, env, args...); code != 0 || !strings.Contains(errOut, "issuecomment-100") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	calls := strings.Join(g.callList(), "\n")
	if !strings.Contains(calls, "PATCH /repos/SemiAnalysisAI/InferenceX/issues/comments/100") || strings.Count(calls, "POST ") != 1 || !strings.Contains(calls, "page=2") {
		t.Fatalf("calls:\n%s", calls)
	}
	// posting fails: the verdict stands, one warning
	g.status = 403
	code, _, errOut = runWith(t, env, args...)
	if code != 0 || strings.Count(errOut, "warning: GitHub is unavailable") != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// without a token: not posted, said once
	code, _, errOut = runWith(t, map[string]string{}, args...)
	if code != 0 || !strings.Contains(errOut, "--comment needs GITHUB_TOKEN") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestVerifyMarkdownAndSARIF(t *testing.T) {
	t.Parallel()
	repo := corpusCopy(t)
	code, out, _ := runWith(t, nil, "changelog", "verify", "--repo", repo, "--base", "a969ccc715~1", "--head", "a969ccc715", "--format", "markdown")
	if code != 1 || !strings.Contains(out, "### perflog changelog verify: ❌ failed") ||
		!strings.Contains(out, "[`perf-changelog.yaml:5418`](https://github.com/SemiAnalysisAI/InferenceX/blob/a969ccc7153723a8e5b0f4aafd24615626da47af/perf-changelog.yaml#L5418)") ||
		!strings.Contains(out, "`claim/contradicted`") {
		t.Fatalf("exit %d, markdown:\n%s", code, out)
	}
	code, out, _ = runWith(t, nil, "changelog", "verify", "--repo", repo, "--base", "a969ccc715~1", "--head", "a969ccc715", "--format", "sarif")
	var log sarifLog
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != 1 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	// the contradicted claim, and the warning that the new option the
	// PR launches (--no-enable-chunked-prefill) is in no bullet
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != 2 {
		t.Fatalf("sarif %+v", log)
	}
	byRule := map[string]int{}
	for i, r := range log.Runs[0].Results {
		byRule[r.RuleID] = i
	}
	if i, ok := byRule["description/omits-change"]; !ok || log.Runs[0].Results[i].Level != "warning" {
		t.Fatalf("sarif results %+v", log.Runs[0].Results)
	}
	res := log.Runs[0].Results[byRule["claim/contradicted"]]
	if res.RuleID != "claim/contradicted" || res.Level != "error" || res.Locations[0].PhysicalLocation.Region.StartLine != 5418 ||
		log.Runs[0].Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID || len(res.RelatedLocations) != 1 {
		t.Fatalf("result %+v", res)
	}
}

// TestNewEditOnATerminal: --edit runs $EDITOR on the draft and appends
// what it left; a terminal also shows the claims the bullets make.
func TestNewEditOnATerminal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ix")
	if _, err := git.PlainClone(dir, false, &git.CloneOptions{URL: corpusCopy(t)}); err != nil {
		t.Fatal(err)
	}
	// an uncommitted image bump
	cfg := filepath.Join(dir, "configs", "nvidia-master.yaml")
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.Replace(string(data), "image: vllm/vllm-openai:v0.25.1", "image: vllm/vllm-openai:v0.26.0", 1))
	os.WriteFile(cfg, data, 0o644)
	editor := filepath.Join(t.TempDir(), "editor.sh")
	os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/Update image from/Bump the image from/' \"$1\"\n"), 0o755)

	io, _, out, errOut := iostreams.Test()
	io.SetStdoutTTY(true)
	io.SetStdinTTY(true)
	f := newFactory(io)
	f.Getenv = func(k string) string { return map[string]string{"EDITOR": editor}[k] }
	if code := run(context.Background(), f, []string{"changelog", "new", "--repo", dir, "--pr", "2710", "--edit"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "perf-changelog.yaml"))
	if !strings.HasSuffix(string(got), "pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2707\n\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"Bump the image from vllm/vllm-openai:v0.25.1 to vllm/vllm-openai:v0.26.0\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2710\n") {
		t.Fatalf("changelog tail:\n%s", got[len(got)-400:])
	}
	if !strings.Contains(out.String(), "claims these bullets make") || !strings.Contains(out.String(), "confirmed") {
		t.Fatalf("stdout %q", out)
	}
	// an editor that empties the file cancels; nothing is written
	os.WriteFile(editor, []byte("#!/bin/sh\n: > \"$1\"\n"), 0o755)
	before, _ := os.ReadFile(filepath.Join(dir, "perf-changelog.yaml"))
	if code := run(context.Background(), f, []string{"changelog", "new", "--repo", dir, "--pr", "2710", "--edit"}); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "perf-changelog.yaml"))
	if string(before) != string(after) || !strings.Contains(errOut.String(), "cancelled") {
		t.Fatalf("a cancelled edit wrote the file, or said %q", errOut)
	}
}

// Issue 26, point 4: a redirect to another host never carries the token.
func TestGitHubTokenStaysOnTheAPIHost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
		json.NewEncoder(w).Encode([]map[string]any{})
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
			t.Errorf("the API host got Authorization %q", got)
		}
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	env := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": api.URL}
	if code, _, errOut := runWith(t, env, "changelog", "new", "--repo", corpusCopy(t), "--base", "main~1", "--dry-run"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) == 0 {
		t.Fatal("the redirect was not followed: the test tests nothing")
	}
	for _, h := range leaked {
		if h != "" {
			t.Fatalf("the other host got Authorization %q", h)
		}
	}
}

// Issue 26, point 5: a token echoed by the server, or credentials in
// GITHUB_API_URL, are never printed.
func TestGitHubMessagesRedactTheToken(t *testing.T) {
	t.Parallel()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"message":"invalid credentials %s"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer echo.Close()
	withCreds := strings.Replace(echo.URL, "http://", "http://user:hunter2secret@", 1)
	for _, api := range []string{echo.URL, withCreds, "::not a url " + testToken} {
		env := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": api}
		_, out, errOut := runWith(t, env, "changelog", "new", "--repo", corpusCopy(t), "--base", "main~1", "--dry-run")
		if strings.Contains(out+errOut, testToken) || strings.Contains(out+errOut, "hunter2secret") {
			t.Fatalf("%s: printed a secret:\n%s", api, errOut)
		}
		if api == echo.URL && !strings.Contains(errOut, "invalid credentials [redacted]") {
			t.Fatalf("the server's message is lost: %s", errOut)
		}
		if api == withCreds && !strings.Contains(errOut, "[redacted]@127.0.0.1") {
			t.Fatalf("the host should stay readable: %s", errOut)
		}
	}
}

// Issue 26, point 6: a server that always sends rel="next" does not keep
// verify --comment asking forever.
func TestGitHubCommentPaginationIsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		next func(page int) int
		max  int
	}{
		{"the same page again", func(int) int { return 2 }, 3},
		{"ever more pages", func(p int) int { return p + 1 }, maxCommentPages + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			lists, posts := 0, 0
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				switch r.Method {
				case http.MethodGet:
					lists++
					page := 1
					fmt.Sscan(r.URL.Query().Get("page"), &page)
					w.Header().Set("Link", fmt.Sprintf(`<%s%s?page=%d&per_page=100>; rel="next"`, srv.URL, r.URL.Path, tc.next(page)))
					json.NewEncoder(w).Encode([]map[string]any{{"id": 1, "body": "LGTM"}})
				case http.MethodPost:
					posts++
					json.NewEncoder(w).Encode(map[string]any{"id": 5, "html_url": "https://github.com/x#issuecomment-5"})
				}
			}))
			defer srv.Close()
			env := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": srv.URL}
			code, _, errOut := runWith(t, env, "changelog", "verify", "--repo", corpusCopy(t), "--base", "main~1", "--head", "main", "--pr", "2707", "--comment")
			mu.Lock()
			defer mu.Unlock()
			if code != 0 || posts != 1 || lists > tc.max {
				t.Fatalf("exit %d, %d list calls (at most %d), %d posts: %s", code, lists, tc.max, posts, errOut)
			}
		})
	}
}

// Issue 26, point 8: a cancelled verify reports the interruption (exit
// 130), not a verdict from an incomplete check.
func TestVerifyInterrupted(t *testing.T) {
	io, _, out, errOut := iostreams.Test()
	f := newFactory(io)
	f.Getenv = func(string) string { return "" }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := run(ctx, f, []string{"changelog", "verify", "--repo", "../../testdata/corpus/inferencex.git", "--base", "main~1", "--head", "main"})
	if code != ExitInterrupted || strings.Contains(out.String(), "ok:") || !strings.Contains(errOut.String(), "interrupted") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
