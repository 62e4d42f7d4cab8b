package report

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perflog/perflog/internal/safefile"
	"github.com/perflog/perflog/provenance"
)

//go:embed assets
var assets embed.FS

// Marker is the file that marks a directory as a report Write may
// replace: Write refuses a non-empty directory without it.
const Marker = ".perflog-report"

// ErrNotReport marks an output directory that holds other files.
var ErrNotReport = errors.New("not a perflog report")

var (
	css   = template.CSS(must(assets.ReadFile("assets/style.css")))
	pages = template.Must(template.New("site").Funcs(template.FuncMap{
		"grouped":   provenance.GroupChanges,
		"commitURL": func(s *Site, sha string) string { return "https://github.com/" + s.Repository + "/commit/" + sha },
		"prURL":     func(s *Site, n int) string { return fmt.Sprintf("https://github.com/%s/pull/%d", s.Repository, n) },
		"blobURL": func(s *Site, rev, file string, line int) string {
			u := "https://github.com/" + s.Repository + "/blob/" + rev + "/" + file
			if line > 0 {
				u += fmt.Sprintf("#L%d", line)
			}
			return u
		},
		"evRev": func(c Claim, rev string) string {
			if rev == "base" && c.Base != "" {
				return c.Base
			}
			return c.Head
		},
		"short": shortSHA,
		"date":  func(t time.Time) string { return t.UTC().Format("2006-01-02") },
		"deref": func(p *int) int { return *p },
		"add":   func(a, b int) int { return b + a },
		"sub":   func(a, b int) int { return b - a },
		"list":  func(s ...string) []string { return s },
		"rowID": rowID,
		"plural": func(n int, what string) string {
			if n == 1 {
				return "1 " + what
			}
			return fmt.Sprintf("%d %ss", n, what)
		},
	}).ParseFS(assets, "assets/site.html.tmpl"))
)

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// page is what a template renders.
type page struct {
	Site  *Site
	Title string
	CSS   template.CSS
	// Root leads from the page to the site's root ("" or "../").
	Root string
	// pages are the recipe pages by key.
	pages map[string]string

	// the overview's
	Bars     *Bars
	Verdicts []verdictRow
	Flagged  []*provenance.AuditEntry
	Mismatch int

	// a recipe page's
	Recipe   *Recipe
	Timeline *Timeline
}

type verdictRow struct {
	Verdict provenance.Verdict
	Count   int
	Meaning string
}

// prArg and keysArg are the arguments of the "pr" and "keys" templates.
type prArg struct {
	Site *Site
	PR   *int
}

type keysArg struct {
	Keys  []string
	Pages map[string]string
	Root  string
}

// keyArg is the argument of the "key" template.
type keyArg struct {
	Key   string
	Pages map[string]string
	Root  string
}

// One is the "key" template's argument for one of the keys.
func (a keysArg) One(k string) keyArg { return keyArg{k, a.Pages, a.Root} }

func (p *page) WithPR(pr *int) prArg { return prArg{p.Site, pr} }

func (p *page) WithKeys(keys []string) keysArg { return keysArg{keys, p.pages, p.Root} }

// Bars is the overview's bar chart of entries by verdict.
type Bars struct {
	Width, Height, Left int
	Bars                []Bar
}

// Bar is one verdict's bar.
type Bar struct {
	Label    string
	Class    string
	Count    int
	Y, Width int
	End      int // Left + Width
}

// Stats say what Write wrote.
type Stats struct {
	Pages int
	Bytes int64
	// Largest is the size of the largest page.
	Largest int64
}

// Write renders the site into dir: index.html and one page per recipe
// under recipes/. dir is created when missing; an existing one must be
// empty or a report written before (Marker), whose recipe pages no
// longer in the site are removed.
func Write(s *Site, dir string) (*Stats, error) {
	if err := prepare(dir); err != nil {
		return nil, err
	}
	keys := map[string]string{}
	for _, r := range s.Recipes {
		keys[r.Key] = r.Page
	}
	st := &Stats{}
	put := func(name string, tmpl string, p *page) error {
		p.Site, p.CSS, p.pages = s, css, keys
		var b bytes.Buffer
		if err := pages.ExecuteTemplate(&b, tmpl, p); err != nil {
			return err
		}
		st.Pages++
		st.Bytes += int64(b.Len())
		st.Largest = max(st.Largest, int64(b.Len()))
		return writeFile(dir, name, b.Bytes())
	}
	if err := put("index.html", "overview", overview(s)); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, r := range s.Recipes {
		want[filepath.Base(r.Page)] = true
		p := &page{Title: r.Key + " · " + s.Repository, Root: "../", Recipe: r, Timeline: timeline(r)}
		if err := put(r.Page, "recipe", p); err != nil {
			return nil, err
		}
	}
	if err := prune(filepath.Join(dir, "recipes"), want); err != nil {
		return nil, err
	}
	return st, writeFile(dir, Marker, []byte("written by perflog report; the next report replaces this directory's pages\n"))
}

// overview is the overview page of s.
func overview(s *Site) *page {
	p := &page{Title: "Changelog health · " + s.Repository}
	flaggedOrder := []provenance.Verdict{provenance.VerdictMismatch, provenance.VerdictPlaceholder, provenance.VerdictNoPR,
		provenance.VerdictEdited, provenance.VerdictRetrigger, provenance.VerdictRelanded, provenance.VerdictBackfilled}
	for i := range s.Audit.Entries {
		e := &s.Audit.Entries[i]
		if slices.Contains(flaggedOrder, e.Verdict) {
			p.Flagged = append(p.Flagged, e)
		}
	}
	slices.SortStableFunc(p.Flagged, func(a, b *provenance.AuditEntry) int {
		return slices.Index(flaggedOrder, a.Verdict) - slices.Index(flaggedOrder, b.Verdict)
	})
	p.Mismatch = s.Audit.Summary[provenance.VerdictMismatch]
	most := 0
	for _, v := range provenance.Verdicts {
		if n := s.Audit.Summary[v]; n > 0 {
			p.Verdicts = append(p.Verdicts, verdictRow{v, n, v.Meaning()})
			most = max(most, n)
		}
	}
	if most > 0 {
		b := &Bars{Left: 100, Width: 640}
		for i, v := range p.Verdicts {
			w := max(1, (b.Width-b.Left-60)*v.Count/most)
			b.Bars = append(b.Bars, Bar{Label: string(v.Verdict), Class: "verdict-" + string(v.Verdict), Count: v.Count,
				Y: 6 + i*24, Width: w, End: b.Left + w})
		}
		b.Height = 12 + len(b.Bars)*24
		p.Bars = b
	}
	return p
}

// prepare makes dir ready to hold a report.
func prepare(dir string) error {
	des, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(des) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, Marker)); err != nil {
		return fmt.Errorf("%s holds other files: %w (choose another --out, or empty it)", dir, ErrNotReport)
	}
	return nil
}

// prune removes the pages of dir that want does not name.
func prune(dir string, want map[string]bool) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, de := range des {
		if n := de.Name(); de.Type().IsRegular() && strings.HasSuffix(n, ".html") && !want[n] {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFile replaces the page rel of the site in dir (safefile.Write: a
// page is never half written, nor written through a link out of dir).
func writeFile(dir, rel string, data []byte) error {
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(filepath.FromSlash(rel))), 0o755); err != nil {
		return err
	}
	_, err := safefile.Write(dir, rel, data)
	return err
}
