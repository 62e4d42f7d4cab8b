package provenance

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
)

// reach says which of a recipe's points a field change reaches: "all
// points" for a recipe-wide field or a launch field every point shares,
// the configuration a qualified launch field names ("tp8 dpa 8k1k"), the
// row a search-space field belongs to; "" when it cannot tell.
func reach(path string, v *config.Recipe) string {
	if strings.HasPrefix(path, "launch.") {
		if _, point := recipe.SplitField(path); point != "" {
			return "only " + point
		}
		return "all points"
	}
	if path == "" || !strings.ContainsAny(path, ".[") {
		return "all points"
	}
	if v == nil {
		return ""
	}
	if r, ok := v.RowAt(path); ok {
		return "only " + rowText(r)
	}
	return ""
}

// rowText names a row the way launch fields qualify points: "tp8 ep8
// dpa mtp 8k1k".
func rowText(r config.Row) string {
	var parts []string
	for i := range r.TP {
		parts = append(parts, fmt.Sprintf("tp%d", r.TP[i]))
		if i < len(r.EP) && r.EP[i] > 1 {
			parts = append(parts, fmt.Sprintf("ep%d", r.EP[i]))
		}
		if i < len(r.DPA) && r.DPA[i] {
			parts = append(parts, "dpa")
		}
	}
	if r.Spec != "" && r.Spec != "none" {
		parts = append(parts, r.Spec)
	}
	if r.KVOffloading != "" && r.KVOffloading != "none" {
		parts = append(parts, "kv "+r.KVOffloading)
	}
	switch {
	case r.ISL == 1024 && r.OSL == 1024:
		parts = append(parts, "1k1k")
	case r.ISL == 8192 && r.OSL == 1024:
		parts = append(parts, "8k1k")
	case r.ISL > 0:
		parts = append(parts, fmt.Sprintf("%d_%d", r.ISL, r.OSL))
	}
	return strings.Join(parts, " ") + " row"
}

// reaches reports whether a change reaches the points of configuration
// point ("" for any).
func reaches(c FieldChange, point string) bool {
	if point == "" || c.Reach == "all points" || c.Reach == "" {
		return true
	}
	for _, w := range strings.Fields(point) {
		if !slices.Contains(strings.Fields(strings.TrimSuffix(strings.TrimPrefix(c.Reach, "only "), " row")), w) {
			return false
		}
	}
	return true
}

// ErrNoSuchPoint is returned for a point that no row of the recipe
// names at either end of a bisection.
var ErrNoSuchPoint = errors.New("no such point")

// checkPoint says whether some row of key at good or at bad has every
// word of point in its configuration ("tp8 8k1k"); "" is every point.
func (h *History) checkPoint(key string, good, bad plumbing.Hash, point string) error {
	if point == "" {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	for _, at := range []plumbing.Hash{good, bad} {
		sq, err := h.seqOf(at)
		if err != nil {
			continue
		}
		v := h.recipeValueAt(key, sq)
		if v == nil {
			continue
		}
		for _, r := range v.Rows() {
			name := strings.TrimSuffix(rowText(r), " row")
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
			if reaches(FieldChange{Reach: "only " + name}, point) {
				return nil
			}
		}
	}
	if len(names) == 0 {
		return nil // no rows to check it against
	}
	return fmt.Errorf("%w: no row of %s names %q (its rows: %s)", ErrNoSuchPoint, key, point, strings.Join(names, ", "))
}

// Candidate is a commit to rerun when bisecting a recipe's regression.
type Candidate struct {
	// Order is when to rerun it: 1 first. Each rerun halves the commits
	// still suspect.
	Order int `json:"order"`
	LogItem
}

// BisectReport is the outcome of Bisect.
type BisectReport struct {
	Key  string `json:"key"`
	Good string `json:"good"`
	Bad  string `json:"bad"`
	// Candidates are the commits in good..bad that changed what the
	// recipe's points run (a field of its config or of its launch; not
	// its benchmark client's options, not the changelog alone), oldest
	// first.
	Candidates []Candidate `json:"candidates"`
}

// Bisect lists the commits of good..bad (good excluded) that may explain a
// change of key's results, in the order to rerun them: the middle
// candidate first, then the middle of the half the result points to, as
// git bisect would, but over these commits alone.
//
// point, when not "", keeps the changes that reach that configuration
// ("tp8 8k1k": every word of it in the change's reach, or a change that
// reaches all points). Rows added or removed are no candidates: they
// change which points run, not what a point that runs at both ends does;
// nor is a change of launch state alone (points that stopped or started
// being known): a change made while the launch was not known is listed
// at the commit that made it known again, with the stretch it was made
// in (FieldChange.NotKnownFrom).
func (h *History) Bisect(key string, good, bad plumbing.Hash, launches []LaunchVersion, point string) (*BisectReport, error) {
	d, err := h.KeyDiff(key, good, bad, launches)
	if err != nil {
		return nil, err
	}
	if err := h.checkPoint(key, good, bad, point); err != nil {
		return nil, err
	}
	rep := &BisectReport{Key: key, Good: d.From, Bad: d.To, Candidates: []Candidate{}}
	for _, it := range d.Items {
		if it.Kind == EvChangelog {
			continue
		}
		var runs []FieldChange
		for _, c := range it.Changes {
			if strings.HasPrefix(c.Path, "launch.client.") || !reaches(c, point) {
				continue
			}
			if p, _ := recipe.SplitField(c.Path); p == statusPath {
				continue // a state, not what a point runs: the changes across it say that
			}
			if c.Kind != config.Changed && strings.HasSuffix(c.Path, "]") && !strings.HasPrefix(c.Path, "launch.") {
				continue // a row or a scenario item added or removed
			}
			runs = append(runs, c)
		}
		if len(runs) == 0 {
			continue
		}
		it.Changes = runs
		rep.Candidates = append(rep.Candidates, Candidate{LogItem: it})
	}
	order := 0
	queue := [][2]int{{0, len(rep.Candidates) - 1}}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if r[0] > r[1] {
			continue
		}
		mid := (r[0] + r[1]) / 2
		order++
		rep.Candidates[mid].Order = order
		queue = append(queue, [2]int{r[0], mid - 1}, [2]int{mid + 1, r[1]})
	}
	return rep, nil
}
