package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perflog/perflog/provenance"
)

// A Timeline is a recipe's history drawn as SVG: commits along time, one
// lane per field or launch group, a mark where a commit changed the lane
// (a link to its row of the history table, its changes in a tooltip), and
// a changelog lane marking the commits whose entries name the recipe and
// those that changed it without one.
type Timeline struct {
	Width, Height int
	// Left is where the lanes' marks start (their names are left of it).
	Left  int
	Lanes []Lane
	Ticks []Tick
	Marks []Mark
}

// Lane is a row of the timeline.
type Lane struct {
	Name string
	Y    int
}

// Tick is a date on the time axis.
type Tick struct {
	X     int
	Label string
}

// Mark is one commit on one lane.
type Mark struct {
	X, Y int
	// Href is the commit's row of the history table.
	Href string
	// Title says what the commit did to the lane.
	Title string
	// Kind is "change", "event" (created, renamed, deleted), "entry" or
	// "missing" (no entry); each has its own shape, not only a colour.
	Kind string
}

// laneOrder lists the lanes top to bottom; a lane shows when a mark is on
// it.
var laneOrder = []string{"recipe", "image", "model", "runner", "precision", "framework", "search space", "other fields",
	"launch image", "server flags", "env vars", "router", "client", "launch settings", changelogLane}

// fieldLanes are the lanes of changed fields by path prefix; a path under
// none is "launch settings" or "other fields".
var fieldLanes = []struct{ prefix, name string }{
	{"image", "image"}, {"model", "model"}, {"runner", "runner"}, {"precision", "precision"}, {"framework", "framework"},
	{"scenarios", "search space"}, {"seq-len-configs", "search space"},
	{"launch.image", "launch image"}, {"launch.flags", "server flags"}, {"launch.env", "env vars"}, {"launch.runner-env", "runner env"},
	{"launch.router", "router"}, {"launch.client", "client"},
}

const changelogLane = "changelog"

// laneOf is the lane of a changed field's path.
func laneOf(p string) string {
	for _, l := range fieldLanes {
		if p == l.prefix || strings.HasPrefix(p, l.prefix+".") || strings.HasPrefix(p, l.prefix+"[") {
			return l.name
		}
	}
	if isLaunch(p) {
		return "launch settings"
	}
	return "other fields"
}

const (
	laneHeight = 26
	axisHeight = 28
	labelWidth = 130
	plotWidth  = 820
	markR      = 5
)

// timeline draws r's items.
func timeline(r *Recipe) *Timeline {
	if len(r.Items) == 0 {
		return nil
	}
	type laneMark struct {
		lane string
		date time.Time
		mark Mark
	}
	var ms []laneMark
	used := map[string]bool{}
	first, last := r.Items[0].Date, r.Items[0].Date
	for _, it := range r.Items {
		if it.Date.Before(first) {
			first = it.Date
		}
		if it.Date.After(last) {
			last = it.Date
		}
		head := fmt.Sprintf("%s %s%s", it.Date.Format("2006-01-02"), shortSHA(it.Commit), prSuffix(it.PR))
		href := "#" + rowID(it.Commit)
		add := func(lane, kind string, lines []string) {
			used[lane] = true
			ms = append(ms, laneMark{lane, it.Date, Mark{Href: href, Kind: kind, Title: head + "\n" + strings.Join(lines, "\n")}})
		}
		switch it.Kind {
		case provenance.EvCreated, provenance.EvRenamed, provenance.EvDeleted:
			what := string(it.Kind)
			if it.From != "" {
				what += " from " + it.From
			}
			add("recipe", "event", []string{what})
		}
		byLane := map[string][]string{}
		var order []string
		for _, c := range provenance.GroupChanges(it.Changes) {
			l := laneOf(c.Path)
			if _, ok := byLane[l]; !ok {
				order = append(order, l)
			}
			byLane[l] = append(byLane[l], changeText(c))
		}
		for _, l := range order {
			add(l, "change", capped(byLane[l], 8))
		}
		switch {
		case len(it.Entries) > 0:
			var bs []string
			for _, e := range it.Entries {
				bs = append(bs, e.Description...)
			}
			add(changelogLane, "entry", capped(bs, 6))
		case r.NoEntry[it.Commit]:
			add(changelogLane, "missing", []string{"changed the recipe; no changelog entry names it"})
		}
	}
	t := &Timeline{Left: labelWidth, Width: labelWidth + plotWidth + 20}
	y := map[string]int{}
	for _, name := range laneOrder {
		if used[name] {
			y[name] = axisHeight + len(t.Lanes)*laneHeight + laneHeight/2
			t.Lanes = append(t.Lanes, Lane{Name: name, Y: y[name]})
		}
	}
	t.Height = axisHeight + len(t.Lanes)*laneHeight + 8
	x := scale(first, last, t.Left+10, t.Left+plotWidth)
	for _, m := range ms {
		m.mark.X, m.mark.Y = x(m.date), y[m.lane]
		t.Marks = append(t.Marks, m.mark)
	}
	t.Ticks = ticks(first, last, x)
	return t
}

// scale maps dates in [first, last] to [x0, x1].
func scale(first, last time.Time, x0, x1 int) func(time.Time) int {
	span := last.Sub(first)
	return func(t time.Time) int {
		if span <= 0 {
			return (x0 + x1) / 2
		}
		return x0 + int(float64(x1-x0)*float64(t.Sub(first))/float64(span))
	}
}

// ticks mark the time axis with at most about ten dates: month starts
// over a span of months (thinned to every second, third... month), days or
// Mondays over a shorter one, so that a recipe with a month of history
// still gets a readable axis.
func ticks(first, last time.Time, x func(time.Time) int) []Tick {
	first, last = first.UTC(), last.UTC()
	var all []time.Time
	layout := "2006-01"
	if last.Sub(first) < 70*24*time.Hour {
		layout = "2006-01-02"
		d := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC)
		if d.Before(first) {
			d = d.AddDate(0, 0, 1)
		}
		days := int(last.Sub(d).Hours()/24) + 1
		step := 1
		if days > 10 {
			step = 7 // Mondays
			for d.Weekday() != time.Monday {
				d = d.AddDate(0, 0, 1)
			}
		}
		for ; !d.After(last); d = d.AddDate(0, 0, step) {
			all = append(all, d)
		}
	} else {
		m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC)
		for ; !m.After(last); m = m.AddDate(0, 1, 0) {
			if !m.Before(first) {
				all = append(all, m)
			}
		}
	}
	step := max((len(all)+9)/10, 1)
	var out []Tick
	for i := 0; i < len(all); i += step {
		out = append(out, Tick{X: x(all[i]), Label: all[i].Format(layout)})
	}
	return out
}

// changeText is a change in one line: "path: old -> new (reach)".
func changeText(c provenance.FieldChange) string {
	var b strings.Builder
	b.WriteString(c.Path)
	b.WriteString(": ")
	switch {
	case c.Old == "" && c.New != "":
		b.WriteString("added " + c.New)
	case c.New == "" && c.Old != "":
		b.WriteString("removed " + c.Old)
	default:
		b.WriteString(c.Old + " → " + c.New)
	}
	if c.Reach != "" && c.Reach != "all points" {
		b.WriteString(" (" + c.Reach + ")")
	}
	return b.String()
}

// capped keeps the first n lines and says how many more there are.
func capped(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(slices.Clip(lines[:n]), fmt.Sprintf("… and %d more", len(lines)-n))
}

func prSuffix(pr *int) string {
	if pr == nil {
		return ""
	}
	return fmt.Sprintf(" #%d", *pr)
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// rowID is the id of a commit's row in a recipe's history table.
func rowID(commit string) string { return "c-" + shortSHA(commit) }
