// Package report builds a static HTML site of a repository's changelog
// health and of each recipe's history: an overview (the audit of every
// entry's pr-link, contradicted claims, recipes changed without an entry,
// the lint of the scripts) and one page per recipe with a timeline of its
// field and launch changes next to the entries that announced them.
//
// Build gathers the site from an index.Source (the index when it answers,
// git otherwise); Write renders it with html/template: inline CSS, SVG
// drawn in Go, no script, a table beside every chart.
//
// Dependencies: provenance, provenance/index, changelog, changelog/claims,
// config, recipe, internal/safefile, github.com/go-git/go-git/v5.
package report

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
	"github.com/perflog/perflog/recipe/lint"
)

// Options configure Build.
type Options struct {
	// Key keeps the recipes (and the entries) whose key matches this glob
	// ('*' wildcards); "" keeps all.
	Key string
	// Launches dry-runs the launch history of every recipe the index does
	// not hold it for (see index.Source.Launches); without it a recipe's
	// page shows launch changes only when the index holds its launch walk.
	Launches bool
	// Progress, when set, starts a progress report under a label.
	Progress func(label string) (update func(provenance.Progress), done func())
}

// Site is what the report shows.
type Site struct {
	// Repository is the GitHub repository ("owner/name") links point at.
	Repository string
	Rev        plumbing.Hash
	RevDate    time.Time
	RevSubject string
	// Changelog is the changelog's path.
	Changelog string
	// Key is Options.Key.
	Key   string
	Audit *provenance.AuditReport
	// Claims are the contradicted claims of the audited entries.
	Claims []Claim
	// Missing are the commits, since the changelog exists, that changed a
	// recipe of the report without an entry naming it; newest first.
	Missing []Missing
	// Findings are the lint findings of the scripts at Rev (with a Key,
	// those about the recipes it keeps).
	Findings []lint.Finding
	Recipes  []*Recipe
	// Shallow is the boundary of a shallow clone (zero for a whole
	// history): what existed there is attributed to it.
	Shallow plumbing.Hash
	// LaunchesMissing counts the recipes whose launch history is not
	// shown (the index holds none and Options.Launches was not set).
	LaunchesMissing int
}

// Claim is a contradicted claim with its entry.
type Claim struct {
	Entry *provenance.AuditEntry
	claims.Result
	// Bullet is the description bullet the claim was read from.
	Bullet string
	// Head and Base are the introducing commit and its first parent, where
	// the evidence was read.
	Head, Base string
}

// Missing is a commit that changed recipes without an entry naming them.
type Missing struct {
	provenance.CommitRef
	Keys []string
}

// Recipe is one recipe's page.
type Recipe struct {
	Key string
	// Page is the page's file name under recipes/.
	Page string
	// File and Line say where the recipe is defined at Rev.
	File string
	Line int
	// Items are the commits of its history, newest first (provenance log).
	Items []provenance.LogItem
	// Launches says whether Items carry the launch changes.
	Launches bool
	// Changes, LaunchChanges and Missing count the items' field changes,
	// launch field changes (a change shared by several points once, as
	// shown: provenance.GroupChanges), and items without an entry.
	Changes, LaunchChanges, Missing int
	// NoEntry holds the commits of Items that changed the recipe without
	// an entry naming it while the changelog existed (before it, no entry
	// could be written).
	NoEntry map[string]bool
}

// Build gathers the site at src's revision.
func Build(ctx context.Context, src *index.Source, settings *config.Settings, o Options) (*Site, error) {
	rep, err := src.Audit(ctx, o.Key)
	if err != nil {
		return nil, err
	}
	if err := src.Claims(ctx, rep); err != nil {
		return nil, err
	}
	h, err := src.History(ctx, provenance.PartsAll)
	if err != nil {
		return nil, err
	}
	seq, ok := h.SeqOf(src.Rev)
	if !ok {
		return nil, fmt.Errorf("%s is not in the history built", src.Rev)
	}
	ci, err := h.CommitAt(seq)
	if err != nil {
		return nil, err
	}
	s := &Site{Repository: settings.Repository(), Rev: src.Rev, RevDate: ci.Date, RevSubject: ci.Subject,
		Changelog: settings.ChangelogPath(), Key: o.Key, Audit: rep}
	if b := src.Repo.ShallowCommits(); len(b) > 0 {
		s.Shallow = b[0]
	}
	if s.Claims, err = contradicted(src, h, rep); err != nil {
		return nil, err
	}
	if s.Findings, err = src.Findings(ctx); err != nil {
		return nil, err
	}
	if o.Key != "" { // the findings about the recipes kept
		g := config.GlobRegexp(o.Key)
		s.Findings = slices.DeleteFunc(s.Findings, func(f lint.Finding) bool { return f.Key == "" || !g.MatchString(f.Key) })
	}
	if err := s.recipes(ctx, src, h, seq, o); err != nil {
		return nil, err
	}
	s.Missing = missing(s.Recipes)
	return s, nil
}

// contradicted lists the audit's contradicted claims in entry order, with
// their bullets.
func contradicted(src *index.Source, h *provenance.History, rep *provenance.AuditReport) ([]Claim, error) {
	var out []Claim
	var f *changelog.File
	for i := range rep.Entries {
		e := &rep.Entries[i]
		for _, c := range e.Claims {
			if c.Verdict != claims.Contradicted || e.Introduced == nil {
				continue
			}
			if f == nil {
				raw, err := provenance.AuditText(src.Repo, rep)
				if err != nil {
					return nil, err
				}
				if f, err = changelog.Parse(rep.Path, raw); err != nil || f == nil {
					return nil, fmt.Errorf("%s: %v", rep.Path, err)
				}
			}
			cl := Claim{Entry: e, Result: c, Head: e.Introduced.Commit}
			if e.Index >= 1 && e.Index <= len(f.Entries) {
				if fs := f.Entries[e.Index-1].Fields; fs != nil && c.Bullet < len(fs.Description) {
					cl.Bullet = fs.Description[c.Bullet]
				}
			}
			if sq, ok := h.SeqOf(plumbing.NewHash(cl.Head)); ok && sq > 0 {
				cl.Base = h.Chain[sq-1].String()
			}
			out = append(out, cl)
		}
	}
	return out, nil
}

// recipes gathers the page of every recipe at seq that o.Key keeps.
func (s *Site) recipes(ctx context.Context, src *index.Source, h *provenance.History, seq int, o Options) error {
	keys := h.RecipeKeysAt(seq)
	if o.Key != "" {
		g := config.GlobRegexp(o.Key)
		keys = slices.DeleteFunc(keys, func(k string) bool { return !g.MatchString(k) })
	}
	slices.Sort(keys)
	places := h.KeyPlaces(seq)
	h.Materialize(keys...)
	var update func(provenance.Progress)
	done := func() {}
	if o.Progress != nil {
		update, done = o.Progress("reading recipe histories")
	}
	defer done()
	pages := map[string]bool{}
	created := h.ChangelogCreated()
	for i, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if update != nil {
			update(provenance.Progress{Stage: "recipes", Done: i, Total: len(keys)})
		}
		r := &Recipe{Key: k, Page: pageName(k, pages), File: places[k].File, Line: places[k].Line, NoEntry: map[string]bool{}}
		lo := provenance.LogOptions{Rev: s.Rev}
		var err error
		if o.Launches {
			lo.Launches, err = src.Launches(ctx, h, k)
			r.Launches = err == nil
		} else {
			lo.Launches, r.Launches, err = src.StoredLaunches(ctx, h, k)
		}
		if err != nil {
			return fmt.Errorf("%s: launches: %w", k, err)
		}
		if !r.Launches {
			s.LaunchesMissing++
		}
		if r.Items, err = h.Log(k, lo); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		r.count(h, created)
		s.Recipes = append(s.Recipes, r)
	}
	return nil
}

// count sets the recipe's counts from its items; created is the seq of
// the changelog's first version.
func (r *Recipe) count(h *provenance.History, created int) {
	for _, it := range r.Items {
		for _, c := range provenance.GroupChanges(it.Changes) {
			if isLaunch(c.Path) {
				r.LaunchChanges++
			} else {
				r.Changes++
			}
		}
		// (a changed text with no field changed, a re-layout, has nothing
		// for an entry to say)
		if !it.MissingEntry || created < 0 || (it.Kind == provenance.EvChanged && len(it.Changes) == 0) {
			continue
		}
		if sq, ok := h.SeqOf(plumbing.NewHash(it.Commit)); ok && sq >= created {
			r.NoEntry[it.Commit] = true
			r.Missing++
		}
	}
}

func isLaunch(p string) bool { return strings.HasPrefix(p, "launch.") }

// missing groups the recipes' items without an entry by commit, newest
// first.
func missing(rs []*Recipe) []Missing {
	by := map[string]*Missing{}
	for _, r := range rs {
		for _, it := range r.Items {
			if !r.NoEntry[it.Commit] {
				continue
			}
			m := by[it.Commit]
			if m == nil {
				m = &Missing{CommitRef: it.CommitRef}
				by[it.Commit] = m
			}
			m.Keys = append(m.Keys, r.Key)
		}
	}
	out := make([]Missing, 0, len(by))
	for _, m := range by {
		slices.Sort(m.Keys)
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Missing) int {
		if c := b.Date.Compare(a.Date); c != 0 {
			return c
		}
		return strings.Compare(a.Commit, b.Commit)
	})
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// pageName is a file name for key's page, unique among taken.
func pageName(key string, taken map[string]bool) string {
	base := strings.Trim(unsafeName.ReplaceAllString(key, "_"), ".")
	if base == "" {
		base = "recipe"
	}
	name := base + ".html"
	for i := 2; taken[strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s-%d.html", base, i)
	}
	taken[strings.ToLower(name)] = true
	return path.Join("recipes", name)
}
