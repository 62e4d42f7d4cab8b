package changelog

import (
	"strconv"
	"strings"
)

// Link is a pr-link read leniently, the way a reader would: any
// github.com pull-request URL, with or without a suffix such as /files,
// /changes or #discussion, and surrounding whitespace.
type Link struct {
	// Repo is owner/name of the URL ("" when the link is not a GitHub
	// pull-request URL).
	Repo string
	// PR is the pull request number (0 when none).
	PR int
}

// ParseLink reads a pr-link leniently (see Link): after surrounding
// space, [http[s]://][www.]github.com/OWNER/NAME/pull/N, optionally
// followed by one of / # ? and anything but a line break. (An audit
// reads every entry's link, where a regular expression was a visible
// share of an index update; TestParseLinkMatchesPattern checks the two
// agree.)
func ParseLink(s string) Link {
	s = strings.TrimSpace(s)
	if r, ok := strings.CutPrefix(s, "http"); ok {
		r, _ = strings.CutPrefix(r, "s")
		if s, ok = strings.CutPrefix(r, "://"); !ok {
			return Link{}
		}
	}
	s, _ = strings.CutPrefix(s, "www.")
	s, ok := strings.CutPrefix(s, "github.com/")
	if !ok {
		return Link{}
	}
	owner := nameRun(s)
	if owner == 0 || owner == len(s) || s[owner] != '/' {
		return Link{}
	}
	name := nameRun(s[owner+1:])
	if name == 0 {
		return Link{}
	}
	repo := s[:owner+1+name]
	rest, ok := strings.CutPrefix(s[len(repo):], "/pull/")
	if !ok {
		return Link{}
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return Link{}
	}
	if tail := rest[digits:]; tail != "" && (strings.IndexByte("/#?", tail[0]) < 0 || strings.IndexByte(tail, '\n') >= 0) {
		return Link{}
	}
	n, err := strconv.Atoi(rest[:digits])
	if err != nil {
		return Link{}
	}
	return Link{Repo: repo, PR: n}
}

// nameRun is the length of the run of owner or repository name
// characters ([A-Za-z0-9_.-]) s begins with.
func nameRun(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return i
		}
	}
	return len(s)
}

// In reports whether the link points into one of repos (owner/name,
// compared case-insensitively as GitHub does).
func (l Link) In(repos ...string) bool {
	for _, r := range repos {
		if l.Repo != "" && strings.EqualFold(l.Repo, r) {
			return true
		}
	}
	return false
}
