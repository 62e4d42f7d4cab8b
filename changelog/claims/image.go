package claims

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/perflog/perflog/recipe"
)

// imageMatches reports whether an image reference matches a claimed one
// (a full reference or a bare tag), normalising registries, "v"
// prefixes, digests and abbreviated tags.
func imageMatches(claim, actual string) bool {
	cr, ct, cd := SplitRef(claim)
	ar, at, ad := SplitRef(actual)
	if cr != "" && ar != "" && cr != ar && !strings.HasSuffix(ar, "/"+cr) && !strings.HasSuffix(cr, "/"+ar) {
		return false
	}
	if cd != "" {
		return ad != "" && strings.HasPrefix(ad, cd)
	}
	if ct == "" {
		return cr != "" && ct == "" && cd == ""
	}
	return tagMatches(ct, at)
}

func tagMatches(claim, actual string) bool {
	c, a := strings.ToLower(claim), strings.ToLower(actual)
	if c == a {
		return true
	}
	c, a = strings.TrimPrefix(c, "v"), strings.TrimPrefix(a, "v")
	if c == a || c == "" || a == "" {
		return c == a && c != ""
	}
	if strings.HasPrefix(a, c) {
		next := a[len(c)]
		if next == '-' || next == '.' || next == '_' || next == '+' {
			return true
		}
		// an abbreviated commit hash
		if m := regexp.MustCompile(`[0-9a-f]{7,}$`).FindString(c); m != "" {
			return true
		}
	}
	return false
}

// SplitRef splits an image reference, as image claims read it, into
// repository, tag and digest; a bare tag has no repository.
func SplitRef(ref string) (repo, tag, digest string) {
	ref = strings.Trim(ref, "`'\"")
	ref = strings.Replace(ref, "#", "/", 1) // enroot's registry#image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], strings.TrimPrefix(ref[i+1:], "sha256:")
	}
	if !strings.Contains(ref, "/") {
		return "", ref, digest
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	return normRepo(ref), tag, digest
}

func (s *subject) checkImage(r *Result) {
	want := r.Value
	var hit []Evidence
	for _, im := range s.head.images {
		if imageMatches(want, im.Text) {
			hit = append(hit, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "head"})
		}
	}
	if len(hit) == 0 {
		_, tag, _ := SplitRef(want)
		needle := want
		if tag != "" && !strings.Contains(want, "/") {
			needle = tag
		}
		re := regexp.MustCompile(`(^|[^A-Za-z0-9._-])` + regexp.QuoteMeta(needle) + `($|[^A-Za-z0-9])`)
		hit = grep(s.head.sources, re, "head", needle)
		if len(hit) == 0 {
			hit = grep(s.changed, re, "head", needle)
		}
	}
	if len(hit) > 0 {
		r.set(Confirmed, "the image is "+hit[0].Text, hit[0])
		s.checkFrom(r)
		return
	}
	repo, _, _ := SplitRef(want)
	var same []recipe.Located
	for _, im := range s.head.images {
		ar, _, _ := SplitRef(im.Text)
		if repo == "" || ar == repo || strings.HasSuffix(ar, "/"+repo) || strings.HasSuffix(repo, "/"+ar) || lastSeg(ar) == lastSeg(repo) {
			same = append(same, im)
		}
	}
	if len(same) == 0 || !s.head.exists {
		r.set(Unverified, "no image of the listed recipes is of that repository")
		return
	}
	var ev []Evidence
	var names []string
	for _, im := range same {
		ev = append(ev, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "head"})
		names = append(names, im.Text)
	}
	r.set(Contradicted, fmt.Sprintf("the listed recipes run %s, not %s", strings.Join(dedupe(names), ", "), want), ev...)
	s.addBase(r, func(im string) bool { return true })
}

// checkFrom checks the old image of a "from A to B" claim against base.
func (s *subject) checkFrom(r *Result) {
	if r.From == "" || !s.base.exists || len(s.base.images) == 0 {
		return
	}
	for _, im := range s.base.images {
		if imageMatches(r.From, im.Text) {
			return
		}
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9._-])` + regexp.QuoteMeta(r.From) + `($|[^A-Za-z0-9])`)
	if len(grep(s.base.sources, re, "base", r.From)) > 0 {
		return
	}
	repo, _, _ := SplitRef(r.Value)
	var ev []Evidence
	var names []string
	for _, im := range s.base.images {
		ar, _, _ := SplitRef(im.Text)
		if repo == "" || lastSeg(ar) == lastSeg(repo) {
			ev = append(ev, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "base"})
			names = append(names, im.Text)
		}
	}
	if len(ev) == 0 {
		return
	}
	r.Evidence = r.Evidence[:0]
	r.set(Contradicted, fmt.Sprintf("the image before this change was %s, not %s", strings.Join(dedupe(names), ", "), r.From), ev...)
}

func (s *subject) addBase(r *Result, keep func(string) bool) {
	for _, im := range s.base.images {
		if keep(im.Text) {
			r.Evidence = append(r.Evidence, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "base"})
			return
		}
	}
}

func lastSeg(repo string) string { return repo[strings.LastIndex(repo, "/")+1:] }

// listText joins the distinct items, the first n of them and a count of
// the rest.
// ListText lists names in a message as claims' reasons do: each once, at
// most n of them and then how many more.
func ListText(items []string, n int) string {
	items = dedupe(items)
	if len(items) > n {
		items = append(items[:n:n], fmt.Sprintf("%d more", len(items)-n))
	}
	return strings.Join(items, ", ")
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
