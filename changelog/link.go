package changelog

import (
	"regexp"
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

var pullURL = regexp.MustCompile(`^(?:https?://)?(?:www\.)?github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/(\d+)(?:[/#?].*)?$`)

// ParseLink reads a pr-link leniently (see Link).
func ParseLink(s string) Link {
	m := pullURL.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Link{}
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return Link{}
	}
	return Link{Repo: m[1], PR: n}
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
