package changelog

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// linkPattern is the definition ParseLink implements by hand.
var linkPattern = regexp.MustCompile(`^(?:https?://)?(?:www\.)?github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/(\d+)(?:[/#?].*)?$`)

func parseLinkPattern(s string) Link {
	m := linkPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Link{}
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return Link{}
	}
	return Link{Repo: m[1], PR: n}
}

var linkCases = []string{
	"https://github.com/SemiAnalysisAI/InferenceX/pull/2707",
	"  https://github.com/SemiAnalysisAI/InferenceX/pull/2707\n",
	"http://github.com/o/r/pull/1",
	"github.com/o/r/pull/1",
	"www.github.com/o/r/pull/1",
	"https://www.github.com/o/r.x_y-z/pull/12/files",
	"https://github.com/o/r/pull/12#discussion_r1",
	"https://github.com/o/r/pull/12?w=1",
	"https://github.com/o/r/pull/12/files\nmore",
	"https://github.com/o/r/pull/12a",
	"https://github.com/o/r/pull/",
	"https://github.com/o/r/pull/XXX",
	"https://github.com/o/r/pulls/12",
	"https://github.com/o/r/issues/12",
	"https://github.com/o//pull/12",
	"https://github.com//r/pull/12",
	"https://github.com/o/r/x/pull/12",
	"https://github.com/o/pull/12",
	"httpss://github.com/o/r/pull/12",
	"https:/github.com/o/r/pull/12",
	"ftp://github.com/o/r/pull/12",
	"HTTPS://github.com/o/r/pull/12",
	"https://GitHub.com/o/r/pull/12",
	"https://gitlab.com/o/r/pull/12",
	"https://github.com/o/r/pull/99999999999999999999",
	"https://github.com/o/r/pull/007",
	"https://github.com/o/r/pull/١٢",
	"https://github.com/ö/r/pull/12",
	"#2707",
	"",
	"XXX",
}

// TestParseLinkMatchesPattern: ParseLink reads each link as the pattern
// it implements does.
func TestParseLinkMatchesPattern(t *testing.T) {
	for _, s := range linkCases {
		if got, want := ParseLink(s), parseLinkPattern(s); got != want {
			t.Errorf("ParseLink(%q) = %+v, the pattern gives %+v", s, got, want)
		}
	}
	if l := ParseLink(" https://github.com/SemiAnalysisAI/InferenceX/pull/2707/files "); l.Repo != "SemiAnalysisAI/InferenceX" || l.PR != 2707 {
		t.Errorf("a real link: %+v", l)
	}
}

func FuzzParseLink(f *testing.F) {
	for _, s := range linkCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ParseLink(s), parseLinkPattern(s); got != want {
			t.Errorf("ParseLink(%q) = %+v, the pattern gives %+v", s, got, want)
		}
	})
}
