package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"

	"github.com/perflog/perflog/internal/safefile"
)

// GitHub is always optional. perflog asks it only when a token is set
// (GITHUB_TOKEN, else GH_TOKEN) and --offline is not given; the API base
// comes from GITHUB_API_URL (GitHub Enterprise), the repository from the
// settings file (github.repository) or the origin remote. On a network
// failure, 401/403 or an exhausted rate limit it falls back to offline
// with one warning and asks nothing more in that run. The token is never
// printed, logged or cached.
type gitHub struct {
	c           *github.Client
	owner, name string
	errOut      io.Writer
	token       string

	mu       sync.Mutex
	disabled bool
	warned   bool
	// cache of commit → PR (0: the API knows none), kept in
	// <git dir>/perflog/github-prs.json so each commit is asked once
	cache     map[string]int
	cachePath string
	dirty     bool
}

// commentMarker identifies perflog's own PR comment (it is updated, not
// duplicated).
const commentMarker = "<!-- perflog:verify -->"

var githubRemote = regexp.MustCompile(`github[^/:]*[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`)

// newGitHub returns the client, or nil when perflog is offline.
func newGitHub(f *Factory, ws *workspace, offline bool) *gitHub {
	if offline {
		return nil
	}
	token := f.Getenv("GITHUB_TOKEN")
	if token == "" {
		token = f.Getenv("GH_TOKEN")
	}
	if token == "" {
		return nil
	}
	api, _ := url.Parse("https://api.github.com/")
	if v := f.Getenv("GITHUB_API_URL"); v != "" {
		u, err := url.Parse(strings.TrimSuffix(v, "/") + "/")
		if err != nil || u.Scheme == "" || u.Host == "" {
			fmt.Fprintf(f.IO.ErrOut, "perflog: GITHUB_API_URL %q is not a URL; working offline\n", redactWith(v, token))
			return nil
		}
		api = u
	}
	c := github.NewClient(&http.Client{
		Timeout:   20 * time.Second,
		Transport: &authTransport{token: token, scheme: api.Scheme, host: api.Host, base: http.DefaultTransport},
	})
	c.BaseURL = api
	slug := ""
	if ws.settings != nil && ws.settings.GitHub.Repository != "" {
		slug = ws.settings.GitHub.Repository
	} else if m := githubRemote.FindStringSubmatch(ws.repo.RemoteURL("origin")); m != nil {
		slug = m[1] + "/" + m[2]
	} else {
		slug = ws.settings.Repository()
	}
	owner, name, _ := strings.Cut(slug, "/")
	g := &gitHub{c: c, owner: owner, name: name, errOut: f.IO.ErrOut, token: token, cache: map[string]int{}}
	if dir := ws.repo.CommonDir(); dir != "" {
		g.cachePath = filepath.Join(dir, "perflog", "github-prs.json")
		if data, err := os.ReadFile(g.cachePath); err == nil {
			var c struct {
				Repository string         `json:"repository"`
				PRs        map[string]int `json:"prs"`
			}
			if json.Unmarshal(data, &c) == nil && c.Repository == slug && c.PRs != nil {
				g.cache = c.PRs
			}
		}
	}
	return g
}

// fail records an API failure: one warning, then offline for the run.
func (g *gitHub) fail(err error) {
	g.disabled = true
	if g.warned {
		return
	}
	g.warned = true
	why := err.Error()
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &rl):
		why = fmt.Sprintf("the rate limit is exhausted until %s", rl.Rate.Reset.Time.Format(time.RFC3339))
	case errors.As(err, &ab):
		why = "GitHub asked to back off (secondary rate limit)"
	case errors.As(err, &er) && er.Response != nil && (er.Response.StatusCode == 401 || er.Response.StatusCode == 403):
		why = fmt.Sprintf("GitHub refused the token (%d %s)", er.Response.StatusCode, http.StatusText(er.Response.StatusCode))
	}
	fmt.Fprintf(g.errOut, "perflog: warning: GitHub is unavailable (%s); continuing offline\n", g.redact(why))
}

// redact keeps the token out of a message: its value wherever it stands
// (a server may echo it), and any credentials.
func (g *gitHub) redact(s string) string { return redactWith(s, g.token) }

var (
	bearerRE   = regexp.MustCompile(`(?i)(bearer\s+|token[=:]\s*)[^\s"]+`)
	userinfoRE = regexp.MustCompile(`(//)[^/@\s]+@`)
)

// redactWith removes token (when set), bearer strings and the user-info
// of URLs ("http://user:secret@host/" becomes "http://[redacted]@host/").
func redactWith(s, token string) string {
	if len(token) >= 4 {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	s = bearerRE.ReplaceAllString(s, "${1}[redacted]")
	return userinfoRE.ReplaceAllString(s, "${1}[redacted]@")
}

// authTransport sends the token to the API host alone. go-github's
// WithAuthToken sets the header inside its transport, on every request,
// so a redirect to another host would carry the token there too; here a
// request to any other scheme or host (a redirect, a link in an answer)
// goes without it.
type authTransport struct {
	token, scheme, host string
	base                http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != t.host || req.URL.Scheme != t.scheme {
		if req.Header.Get("Authorization") != "" {
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
		}
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not change its request
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(req)
}

// PR implements provenance.PRResolver: the pull request a commit belongs
// to, preferring a merged one.
func (g *gitHub) PR(ctx context.Context, commit plumbing.Hash) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n, ok := g.cache[commit.String()]; ok {
		return n, n > 0
	}
	if g.disabled {
		return 0, false
	}
	prs, _, err := g.c.PullRequests.ListPullRequestsWithCommit(ctx, g.owner, g.name, commit.String(), &github.ListOptions{PerPage: 100})
	if err != nil {
		if ctx.Err() == nil {
			g.fail(err)
		}
		return 0, false
	}
	n := 0
	for _, pr := range prs {
		if pr.MergedAt != nil && pr.GetMergeCommitSHA() == commit.String() {
			n = pr.GetNumber()
			break
		}
	}
	if n == 0 {
		for _, pr := range prs {
			if pr.GetHead().GetSHA() == commit.String() || n == 0 {
				n = pr.GetNumber()
			}
		}
	}
	g.cache[commit.String()] = n
	g.dirty = true
	return n, n > 0
}

// save writes the commit → PR cache (best effort: it is only a cache).
func (g *gitHub) save() {
	if g == nil || !g.dirty || g.cachePath == "" {
		return
	}
	data, err := json.Marshal(struct {
		Repository string         `json:"repository"`
		PRs        map[string]int `json:"prs"`
	}{g.owner + "/" + g.name, g.cache})
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(g.cachePath), 0o755) == nil {
		safefile.Write(filepath.Dir(g.cachePath), filepath.Base(g.cachePath), data)
	}
}

// lookupPR finds the PR of the head commit on GitHub (changelog new).
func lookupPR(ctx context.Context, f *Factory, ws *workspace, head plumbing.Hash) (int, bool) {
	g := newGitHub(f, ws, false)
	if g == nil {
		return 0, false
	}
	defer g.save()
	return g.PR(ctx, head)
}

// Bounds of the search for perflog's earlier comment: GitHub answers 100
// comments a page, so 50 pages are 5,000 comments; past them, or past the
// time, a new comment is posted.
const (
	maxCommentPages = 50
	commentSearch   = 60 * time.Second
)

// upsertComment posts body on a PR, or edits perflog's earlier comment
// there (found by its marker, across pages: at most maxCommentPages, for
// at most commentSearch, never the same page twice).
func (g *gitHub) upsertComment(ctx context.Context, pr int, body string) (string, error) {
	body = commentMarker + "\n" + body
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	search, cancel := context.WithTimeout(ctx, commentSearch)
	defer cancel()
	seen := map[int]bool{}
	for pages := 0; ; pages++ {
		if pages == maxCommentPages {
			fmt.Fprintf(g.errOut, "perflog: warning: perflog's comment is not in the PR's first %d pages of comments; posting a new one\n", maxCommentPages)
			break
		}
		seen[opt.Page] = true
		cs, resp, err := g.c.Issues.ListComments(search, g.owner, g.name, pr, opt)
		if err != nil && ctx.Err() == nil && search.Err() != nil {
			fmt.Fprintf(g.errOut, "perflog: warning: listing the PR's comments took over %s; posting a new one\n", commentSearch)
			break
		}
		if err != nil {
			return "", err
		}
		for _, c := range cs {
			if strings.HasPrefix(c.GetBody(), commentMarker) {
				ed, _, err := g.c.Issues.EditComment(ctx, g.owner, g.name, c.GetID(), &github.IssueComment{Body: &body})
				if err != nil {
					return "", err
				}
				return ed.GetHTMLURL(), nil
			}
		}
		if resp == nil || resp.NextPage == 0 || seen[resp.NextPage] {
			break
		}
		opt.Page = resp.NextPage
	}
	c, _, err := g.c.Issues.CreateComment(ctx, g.owner, g.name, pr, &github.IssueComment{Body: &body})
	if err != nil {
		return "", err
	}
	return c.GetHTMLURL(), nil
}
