package changelog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// BaseOptions say how ResolveBase picks the base of a change.
type BaseOptions struct {
	// Rev is the base the user named (--base); "" picks one.
	Rev string
	// MergeBase judges the change from the merge-base of Rev and head
	// (the full profile, changelog new), rather than from Rev as given
	// (the gate compares two trees, as the incumbent CI does).
	MergeBase bool
	// OnBranch says what a head on the base branch itself is compared
	// with: itself, so that only the work tree's changes count (changelog
	// new), or else its last commit (verify).
	OnBranch bool
	// Getenv reads the CI environment (GITHUB_BASE_REF).
	Getenv func(string) string
}

// ResolveBase picks the base commit of a change ending at head and names
// it for messages. Without a Rev it is the merge-base with
// origin/$GITHUB_BASE_REF, origin/main or main, the first that exists. A
// base that cannot be found (a shallow clone, no base branch) is an error
// that says how to fetch it or to pass --base.
func ResolveBase(r *gitscan.Repo, head plumbing.Hash, o BaseOptions) (plumbing.Hash, string, error) {
	rev, mergeBase, onBranch, getenv := o.Rev, o.MergeBase, o.OnBranch, o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	hint := "fetch the base branch with full history (actions/checkout: fetch-depth: 0) or pass --base REV"
	if rev != "" {
		b, err := r.Resolve(rev)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("--base: %w", err)
		}
		if !mergeBase {
			return b, rev, nil
		}
		mb, err := r.MergeBase(b, head)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("cannot find the merge-base of %s and %s: %w; %s", rev, ShortHash(head), err, hint)
		}
		if mb != b {
			return mb, "merge-base(" + rev + ")", nil
		}
		return b, rev, nil
	}
	var cands []string
	if ref := getenv("GITHUB_BASE_REF"); ref != "" {
		cands = append(cands, "origin/"+ref)
	}
	for _, c := range []string{"origin/main", "main"} {
		if !slices.Contains(cands, c) {
			cands = append(cands, c)
		}
	}
	for _, c := range cands {
		b, err := r.Resolve(c)
		if err != nil {
			continue
		}
		mb, err := r.MergeBase(b, head)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: %s has no merge-base with %s (%v); %s", c, ShortHash(head), err, hint)
		}
		if mb == head && onBranch {
			return head, "HEAD", nil
		}
		if mb == head {
			// head is on the base branch itself: judge its last commit
			hc, err := r.Commit(head)
			if err != nil || len(hc.Parents) == 0 {
				if r.Shallow() {
					return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: %s is the boundary of this shallow clone, its parent was not fetched; %s", ShortHash(head), hint)
				}
				return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: %s is %s's root commit; pass --base REV", ShortHash(head), c)
			}
			if _, err := r.Commit(hc.Parents[0]); err != nil && r.Shallow() {
				return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: the parent of %s was not fetched (this is a shallow clone); %s", ShortHash(head), hint)
			}
			return hc.Parents[0], ShortHash(head) + "^", nil
		}
		return mb, "merge-base(" + c + ")", nil
	}
	shallow := ""
	if r.Shallow() {
		shallow = " (this is a shallow clone)"
	}
	return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: none of %s exists%s; %s", strings.Join(cands, ", "), shallow, hint)
}

var pullRef = regexp.MustCompile(`^refs/pull/(\d+)/(?:merge|head)$`)

// maxEventSize bounds the GitHub event file read for the PR number.
const maxEventSize = 64 << 20

// PRFromEnv finds this run's PR in the CI environment: GITHUB_REF
// (refs/pull/N/merge), else pull_request.number in the JSON at
// GITHUB_EVENT_PATH. It returns 0 when neither names one, and where it
// found the number.
func PRFromEnv(getenv func(string) string) (int, string, error) {
	if m := pullRef.FindStringSubmatch(getenv("GITHUB_REF")); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, "GITHUB_REF", nil
	}
	if p := getenv("GITHUB_EVENT_PATH"); p != "" {
		data, err := config.ReadRegular(p, maxEventSize)
		if err != nil {
			return 0, "", fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
		}
		var ev struct {
			PullRequest *struct {
				Number int `json:"number"`
			} `json:"pull_request"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return 0, "", fmt.Errorf("GITHUB_EVENT_PATH %s: %w", p, err)
		}
		if ev.PullRequest != nil && ev.PullRequest.Number > 0 {
			return ev.PullRequest.Number, "GITHUB_EVENT_PATH", nil
		}
	}
	return 0, "", nil
}

// SubjectPR is the PR a one-commit range names in its commit's subject
// ("... (#2710)", as a squash merge writes it on main), or 0.
func SubjectPR(r *gitscan.Repo, base, head plumbing.Hash) (int, string) {
	if c, err := r.Commit(head); err == nil && len(c.Parents) > 0 && c.Parents[0] == base {
		if n, ok := c.PR(); ok {
			return n, "the head commit's subject"
		}
	}
	return 0, ""
}

// ShortHash is a commit's id as messages show it.
func ShortHash(h plumbing.Hash) string { return h.String()[:10] }
