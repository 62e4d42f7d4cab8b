package report

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/net/html"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe/lint"
)

const evil = `<script>alert("x")</script>`

// hostile is a site whose every text a repository controls carries
// markup: keys, bullets, subjects, reasons, findings and links.
func hostile() *Site {
	pr := func(n int) *int { return &n }
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	key := "k1" + evil
	ref := provenance.CommitRef{Commit: strings.Repeat("a", 40), PR: pr(12), Date: day, Subject: "Tune " + evil + " (#12)"}
	entry := provenance.AuditEntry{Index: 1, Line: 3, ConfigKeys: []string{key}, PRLink: "javascript:alert(1)",
		Introduced: &ref, Verdict: provenance.VerdictMismatch, Reason: "links " + evil}
	rep := &provenance.AuditReport{Entries: []provenance.AuditEntry{entry},
		Summary: map[provenance.Verdict]int{provenance.VerdictMismatch: 1}}
	r := &Recipe{Key: key, Page: pageName(key, map[string]bool{}), File: "configs/" + evil + ".yaml", Line: 1, Launches: true,
		NoEntry: map[string]bool{ref.Commit: true},
		Items: []provenance.LogItem{
			{CommitRef: ref, Key: key, Kind: provenance.EvChanged, Changes: []provenance.FieldChange{
				{Kind: config.Changed, Path: "launch.flags.--x" + evil, Old: "1", New: evil, Reach: "only " + evil},
				{Kind: config.Changed, Path: "image", Old: "a", New: "b"}}, MissingEntry: true},
			{CommitRef: provenance.CommitRef{Commit: strings.Repeat("b", 40), Date: day.AddDate(0, -2, 0), Subject: "Add"}, Key: key,
				Kind: provenance.EvCreated, Changes: []provenance.FieldChange{}, Entries: []provenance.LogEntry{
					{Event: provenance.EvIntroduced, ConfigKeys: []string{key}, Description: []string{"bullet " + evil}, PRLink: "https://github.com/o/r/pull/11"}}},
		}}
	r.count(nil, -1)
	return &Site{Repository: "o/r" + evil, Rev: plumbing.NewHash(strings.Repeat("c", 40)), RevDate: day, RevSubject: evil,
		Changelog: "perf-changelog.yaml", Key: evil, Audit: rep,
		Claims: []Claim{{Entry: &rep.Entries[0], Bullet: "set " + evil, Head: ref.Commit,
			Result: claims.Result{Claim: claims.Claim{Text: evil}, Verdict: claims.Contradicted, Reason: evil,
				Evidence: []changelog.Evidence{{File: "b/" + evil + ".sh", Line: 4, Rev: "head"}}}}},
		Missing:  []Missing{{CommitRef: ref, Keys: []string{key}}},
		Findings: []lint.Finding{{Rule: "recipe/x", Severity: "error", File: "b.sh", Line: 2, Key: key, Message: evil, Source: evil}},
		Recipes:  []*Recipe{r}}
}

func parseFile(t *testing.T, name string) *html.Node {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// TestWriteEscapes: markup in any text of the repository renders as text;
// no script element, no event handler, no javascript: link.
func TestWriteEscapes(t *testing.T) {
	dir := t.TempDir()
	s := hostile()
	if _, err := Write(s, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.html", s.Recipes[0].Page} {
		doc := parseFile(t, filepath.Join(dir, name))
		walk(doc, func(n *html.Node) {
			if n.Type != html.ElementNode {
				return
			}
			if n.Data == "script" {
				t.Errorf("%s: a script element", name)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: <%s %s=%q>", name, n.Data, a.Key, a.Val)
				}
				if a.Key == "href" && strings.Contains(strings.ToLower(a.Val), "javascript:") {
					t.Errorf("%s: <%s href=%q>", name, n.Data, a.Val)
				}
			}
		})
		if got := strings.Count(text(doc), evil); got < 3 {
			t.Errorf("%s: the markup shows as text %d times, want it in every text it was put in", name, got)
		}
	}
}

// TestWriteStructure: every chart is an image with a title and has a
// table after it; every link inside the site leads to a page and an id
// that exist; the site needs no script.
func TestWriteStructure(t *testing.T) {
	dir := t.TempDir()
	s := hostile()
	st, err := Write(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pages != 2 {
		t.Errorf("wrote %d pages, want 2", st.Pages)
	}
	docs := map[string]*html.Node{}
	for _, name := range []string{"index.html", s.Recipes[0].Page} {
		doc := parseFile(t, filepath.Join(dir, filepath.FromSlash(name)))
		docs[name] = doc
		charts, tables := 0, 0
		walk(doc, func(n *html.Node) {
			if n.Type != html.ElementNode {
				return
			}
			switch n.Data {
			case "svg":
				if r, _ := attr(n, "role"); r == "img" {
					charts++
					if _, ok := attr(n, "aria-labelledby"); !ok {
						t.Errorf("%s: a chart without a label", name)
					}
				}
			case "table":
				if charts > tables {
					tables = charts
				}
			}
		})
		if charts == 0 || tables < charts {
			t.Errorf("%s: %d charts, %d of them followed by a table", name, charts, tables)
		}
	}
	checkLinks(t, dir, docs, []string{"https://github.com/"})
	// "#N" is a pull request's number, never an entry's: an entry is
	// "entry N, line L" beside it
	entries := 0
	for name, doc := range docs {
		walk(doc, func(n *html.Node) {
			h, ok := attr(n, "href")
			if !ok || n.Type != html.ElementNode || n.Data != "a" {
				return
			}
			text := strings.TrimSpace(textOf(n))
			if strings.HasPrefix(text, "entry ") {
				entries++
			}
			if strings.HasPrefix(text, "#") && !strings.Contains(h, "/pull/") {
				t.Errorf("%s: %q links to %s, not a pull request", name, text, h)
			}
		})
	}
	if entries == 0 {
		t.Error("no link names an entry")
	}
}

// checkLinks checks every link of the pages (by their names in dir): one
// inside the site leads to a page and an id that exist, one out of it
// begins with one of out. It returns how many it checked.
func checkLinks(t *testing.T, dir string, pages map[string]*html.Node, out []string) int {
	t.Helper()
	ids := map[string]map[string]bool{}
	for name, doc := range pages {
		ids[name] = map[string]bool{}
		walk(doc, func(n *html.Node) {
			if id, ok := attr(n, "id"); ok && n.Type == html.ElementNode {
				ids[name][id] = true
			}
		})
	}
	checked := 0
	for name, doc := range pages {
		walk(doc, func(n *html.Node) {
			h, ok := attr(n, "href")
			if !ok || n.Type != html.ElementNode {
				return
			}
			checked++
			if strings.Contains(h, "://") {
				if !slices.ContainsFunc(out, func(p string) bool { return strings.HasPrefix(h, p) }) {
					t.Errorf("%s links to %s, outside %v", name, h, out)
				}
				return
			}
			file, frag, _ := strings.Cut(h, "#")
			target := name
			if file != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(name), file))
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s: %v", name, h, err)
			} else if frag != "" && ids[target] != nil && !ids[target][frag] {
				t.Errorf("%s links to %s: no element has id %q", name, h, frag)
			}
		})
	}
	return checked
}

// TestWriteKeepsOtherFiles: a directory holding other files is refused
// and left as it was; a report is replaced, its stale pages removed.
func TestWriteKeepsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(hostile(), dir); !errors.Is(err, ErrNotReport) {
		t.Fatalf("Write into a directory of other files: %v, want ErrNotReport", err)
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("the refused directory holds %d files, want only notes.txt", len(des))
	}
	out := filepath.Join(dir, "site")
	s := hostile()
	if _, err := Write(s, out); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(out, filepath.FromSlash(s.Recipes[0].Page))
	s.Recipes[0].Page = "recipes/other.html"
	if _, err := Write(s, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the page no longer in the site is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(out, "recipes", "other.html")); err != nil {
		t.Error(err)
	}
}

func TestPageName(t *testing.T) {
	taken := map[string]bool{}
	for _, c := range []struct{ key, want string }{
		{"dsr1-fp8-mi355x-sglang", "recipes/dsr1-fp8-mi355x-sglang.html"},
		{"../etc/passwd", "recipes/_etc_passwd.html"},
		{"a/b", "recipes/a_b.html"},
		{"a:b", "recipes/a_b-2.html"},
		{"DSR1-FP8-MI355X-SGLANG", "recipes/DSR1-FP8-MI355X-SGLANG-2.html"}, // case-insensitive file systems
		{"...", "recipes/recipe.html"},
	} {
		if got := pageName(c.key, taken); got != c.want {
			t.Errorf("pageName(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestLaneOf(t *testing.T) {
	for p, want := range map[string]string{
		"image": "image",
		"scenarios.fixed-seq-len[0].search-space[1]": "search space",
		"seq-len-configs[1]":                         "search space",
		"multinode":                                  "other fields",
		"model-prefix":                               "other fields",
		"launch.image":                               "launch image",
		"launch.flags.--mem-fraction-static[tp8 1k1k]": "server flags",
		"launch.env.SGLANG_X":                          "env vars",
		"launch.router.flags.--policy":                 "router",
		"launch.client.--input-len":                    "client",
		"launch.settings.resources.gpus":               "launch settings",
	} {
		if got := laneOf(p); got != want {
			t.Errorf("laneOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestTextContrast: the text colours of the style sheet keep a contrast of
// at least 4.5:1 (WCAG AA) against the white page and their own
// backgrounds.
func TestTextContrast(t *testing.T) {
	sheet := string(css)
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(sheet, -1) {
		vars[m[1]] = m[2]
	}
	pairs := [][2]string{{"fg", "#ffffff"}, {"muted", "#ffffff"}, {"link", "#ffffff"}, {"missing", "#ffffff"},
		{"entry", "#ffffff"}, {"fg", "bg-alt"}, {"muted", "bg-alt"}, {"link", "bg-alt"}, {"fg", "mark"}, {"link", "mark"}}
	for _, p := range pairs {
		fg, bg := vars[p[0]], p[1]
		if !strings.HasPrefix(bg, "#") {
			bg = vars[bg]
		}
		if fg == "" || bg == "" {
			t.Errorf("the style sheet has no --%s or %s", p[0], p[1])
			continue
		}
		if c := contrast(fg, bg); c < 4.5 {
			t.Errorf("--%s %s on %s: contrast %.2f, want ≥ 4.5", p[0], fg, bg, c)
		}
	}
	// the colours the sheet sets outside the variables
	for _, m := range regexp.MustCompile(`[^-]color:\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(sheet, -1) {
		if c := contrast(m[1], "#ffffff"); c < 4.5 {
			t.Errorf("color %s on white: contrast %.2f, want ≥ 4.5", m[1], c)
		}
	}
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(hex string) float64 {
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

// TestTicks: the time axis carries between two and about ten dates, in
// order and inside the plot, for a history of days, weeks, a month or
// years; a month of history is not one tick.
func TestTicks(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		first, last string
		min, max    int
		label       string // the first tick
	}{
		{"2026-03-02T10:00:00Z", "2026-03-06T18:00:00Z", 4, 5, "2026-03-03"},
		{"2026-08-03T09:00:00Z", "2026-08-29T12:00:00Z", 3, 4, "2026-08-10"}, // a month: its Mondays
		{"2026-06-20T00:00:00Z", "2026-08-25T00:00:00Z", 8, 10, "2026-06-22"},
		{"2025-05-04T00:00:00Z", "2026-11-30T00:00:00Z", 6, 10, "2025-06"},
		{"2019-01-01T00:00:00Z", "2026-12-01T00:00:00Z", 8, 11, "2019-01"},
	} {
		first, last := day(c.first), day(c.last)
		x := scale(first, last, 140, 950)
		ts := ticks(first, last, x)
		if len(ts) < c.min || len(ts) > c.max {
			t.Errorf("%s..%s: %d ticks %v, want %d to %d", c.first, c.last, len(ts), ts, c.min, c.max)
			continue
		}
		if ts[0].Label != c.label {
			t.Errorf("%s..%s: first tick %q, want %q", c.first, c.last, ts[0].Label, c.label)
		}
		for i, tk := range ts {
			if tk.X < 140 || tk.X > 950 || (i > 0 && tk.X <= ts[i-1].X) {
				t.Errorf("%s..%s: tick %d at %d (%v)", c.first, c.last, i, tk.X, ts)
			}
		}
	}
}

// textOf is the text n holds.
func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// TestMissingSaysWhatItCounts: the count of commits without an entry says
// whether it read every recipe's launch history, so that a count that
// grows after `perflog index --launches` is explained on the page.
func TestMissingSaysWhatItCounts(t *testing.T) {
	for _, c := range []struct {
		launchesMissing int
		want            string
	}{
		{0, "Counted from every recipe's config and launch history."},
		{1, "For 1 of 1 recipes only config changes are counted"},
	} {
		s := hostile()
		s.LaunchesMissing = c.launchesMissing
		dir := t.TempDir()
		if _, err := Write(s, dir); err != nil {
			t.Fatal(err)
		}
		var scope string
		walk(parseFile(t, filepath.Join(dir, "index.html")), func(n *html.Node) {
			if id, _ := attr(n, "id"); id == "missing-scope" && n.Type == html.ElementNode {
				scope = textOf(n)
			}
		})
		if !strings.Contains(scope, c.want) {
			t.Errorf("%d recipes without launches: the page says %q, want %q", c.launchesMissing, scope, c.want)
		}
	}
}

// TestShallowSaysHowToFetch: a report of a shallow clone says where its
// history stops and how to fetch the rest (fetch-depth: 0 in Actions); a
// whole history's says nothing of it.
func TestShallowSaysHowToFetch(t *testing.T) {
	for _, shallow := range []bool{false, true} {
		s := hostile()
		if shallow {
			s.Shallow = plumbing.NewHash(strings.Repeat("d", 40))
		}
		dir := t.TempDir()
		if _, err := Write(s, dir); err != nil {
			t.Fatal(err)
		}
		var note string
		walk(parseFile(t, filepath.Join(dir, "index.html")), func(n *html.Node) {
			if id, _ := attr(n, "id"); id == "shallow" && n.Type == html.ElementNode {
				note = textOf(n)
			}
		})
		if shallow != strings.Contains(note, "fetch-depth: 0") || shallow != strings.Contains(note, "dddddddddd") {
			t.Errorf("shallow %v: the page says %q", shallow, note)
		}
	}
}
