package index

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/provenance"
)

// randomRepo is the state of a small scripted repository: two master
// configs (key -> image, in file order) and the changelog's entries.
type randomRepo struct {
	files   [2][]string // keys, in order
	image   map[string]int
	entries []string
	broken  bool // the changelog ends with an entry that does not load
	// rich recipes also have a search space, whose two items swap places
	// and whose values change with the image, and do not load for one
	// image in five (which consumes nothing of the random sequence)
	rich bool
}

func (r *randomRepo) render() map[string]string {
	out := map[string]string{}
	for i, name := range []string{"configs/amd-master.yaml", "configs/nvidia-master.yaml"} {
		var b strings.Builder
		for _, k := range r.files[i] {
			img := r.image[k]
			if !r.rich {
				fmt.Fprintf(&b, "%s:\n  image: img:v%d\n  model: m\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n\n", k, img)
				continue
			}
			image := fmt.Sprintf("img:v%d", img)
			if img%5 == 4 {
				image = "{" + image // a flow mapping never closed
			}
			items := []string{fmt.Sprintf("{ tp: 8, conc-list: [4, %d] }", 8*(1+img/3)), fmt.Sprintf("{ tp: 4, ep: %d, conc-list: [1, 2] }", 1+img/4)}
			if img%2 == 1 {
				items[0], items[1] = items[1], items[0]
			}
			fmt.Fprintf(&b, "%s:\n  image: %s\n  model: m\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n  search-space:\n  - %s\n  - %s\n\n", k, image, items[0], items[1])
		}
		out[name] = b.String()
	}
	cl := strings.Join(r.entries, "\n")
	if r.broken {
		cl += "\n- config-keys: [k\n"
	}
	out["perf-changelog.yaml"] = cl
	return out
}

func (r *randomRepo) clone() *randomRepo {
	c := &randomRepo{image: map[string]int{}, entries: append([]string(nil), r.entries...), broken: r.broken, rich: r.rich}
	for i := range r.files {
		c.files[i] = append([]string(nil), r.files[i]...)
	}
	for k, v := range r.image {
		c.image[k] = v
	}
	return c
}

// step changes the repository at random: an image, a key added, removed,
// renamed, moved or copied to the other file, a reorder, an entry added,
// edited or removed, the changelog broken or mended.
func (r *randomRepo) step(rng *rand.Rand, n int) string {
	keys := func(f int) []string { return r.files[f] }
	pick := func(s []string) (int, bool) {
		if len(s) == 0 {
			return 0, false
		}
		return rng.IntN(len(s)), true
	}
	f := rng.IntN(2)
	switch rng.IntN(10) {
	case 0, 1:
		if i, ok := pick(keys(f)); ok {
			r.image[keys(f)[i]]++
			return "image"
		}
	case 2:
		k := fmt.Sprintf("k%d", n)
		pos := rng.IntN(len(keys(f)) + 1)
		r.files[f] = append(keys(f)[:pos:pos], append([]string{k}, keys(f)[pos:]...)...)
		r.image[k] = 1
		return "add"
	case 3:
		if i, ok := pick(keys(f)); ok {
			r.files[f] = append(keys(f)[:i:i], keys(f)[i+1:]...)
			return "remove"
		}
	case 4:
		if i, ok := pick(keys(f)); ok {
			old, k := keys(f)[i], fmt.Sprintf("k%d", n)
			keys(f)[i] = k
			r.image[k] = r.image[old]
			return "rename"
		}
	case 5:
		if i, ok := pick(keys(f)); ok {
			k := keys(f)[i]
			r.files[f] = append(keys(f)[:i:i], keys(f)[i+1:]...)
			r.files[1-f] = append([]string{k}, keys(1-f)...)
			return "move"
		}
	case 6:
		if i, ok := pick(keys(f)); ok {
			r.files[1-f] = append(keys(1-f), keys(f)[i])
			return "copy"
		}
	case 7:
		rng.Shuffle(len(keys(f)), func(i, j int) { keys(f)[i], keys(f)[j] = keys(f)[j], keys(f)[i] })
		return "reorder"
	case 8:
		r.broken = !r.broken
		return "broken"
	}
	switch i, ok := pick(r.entries); {
	case ok && rng.IntN(4) == 0:
		r.entries = append(r.entries[:i:i], r.entries[i+1:]...)
		return "entry removed"
	case ok && rng.IntN(4) == 0:
		r.entries[i] = strings.Replace(r.entries[i], "change", "edited change", 1)
		return "entry edited"
	}
	k := "k0"
	if len(r.files[0]) > 0 {
		k = r.files[0][0]
	}
	r.entries = append(r.entries, fmt.Sprintf("- config-keys:\n    - %s\n  description:\n    - \"change %d: image img:v2, TP8 conc 4\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/%d\n", k, n, n))
	return "entry"
}

// TestIndexRandomHistoriesStepwise: an index updated after each commit of
// random histories (with rewrites: a reset to an earlier commit and new
// commits on it) holds the tables (the checks tables too), stored audit
// and stored blames of an index built at once at every step.
func TestIndexRandomHistoriesStepwise(t *testing.T) {
	// 18 and 57 found the two bugs this test was written to catch, with
	// 20 steps (PCG's sequence is fixed): events attributed to versions
	// before the fork that did not load, and block numbers reused after a
	// rewrite; the others are there for more. 250 seeds of 30 steps pass.
	seeds, steps := []uint64{1, 2, 3, 18, 57}, 20
	if !testcorpus.Long() {
		seeds = seeds[3:]
	}
	randomStepwise(t, seeds, steps, false, false)
}

// TestIndexRandomRecipesStepwise is TestIndexRandomHistoriesStepwise
// with recipes whose list items move and whose versions do not always
// load, and with ignore-revs (every fourth commit): what the blame of a
// changed recipe, made from its stored one, must follow. 200 seeds of 30
// steps pass.
func TestIndexRandomRecipesStepwise(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if !testcorpus.Long() {
		seeds = seeds[:1]
	}
	randomStepwise(t, seeds, 30, true, true)
}

// randomStepwise runs the random histories of the seeds, steps commits
// each (rich recipes, ignoring every fourth commit, as asked), comparing
// the index updated at each step with one built at once.
func randomStepwise(t *testing.T, seeds []uint64, steps int, rich, ignore bool) {
	ctx := context.Background()
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := newScript(t)
		r := &randomRepo{files: [2][]string{{"k0", "k1"}, {"k2"}}, image: map[string]int{"k0": 1, "k1": 1, "k2": 1}, rich: rich}
		var o Options
		type commit struct {
			h    plumbing.Hash
			repo *randomRepo
		}
		var history []commit
		history = append(history, commit{s.commitFiles("start (#1)", r.render()), r.clone()})
		ix := newIndex(t)
		var did []string
		for n := 2; n <= steps; n++ {
			what := ""
			if len(history) > 3 && rng.IntN(5) == 0 {
				// a force-push: back to an earlier commit
				back := history[rng.IntN(len(history)-1)]
				s.reset(back.h)
				r = back.repo.clone()
				history = append(history, back)
				what = "reset; "
			}
			before := fmt.Sprint(r.render())
			for k := 0; fmt.Sprint(r.render()) == before; k++ {
				what += r.step(rng, n*10+k) + " "
			}
			what = strings.TrimSpace(what)
			history = append(history, commit{s.commitFiles(fmt.Sprintf("%s (#%d)", what, n), r.render()), r.clone()})
			did = append(did, what)
			if ignore && n%4 == 0 {
				o.IgnoreRevs = append(o.IgnoreRevs, s.head())
			}
			if _, _, err := ix.Sync(ctx, s.repo, s.head(), o); err != nil {
				t.Fatalf("seed %d after %v: %v", seed, did, err)
			}
			cold := newIndex(t)
			if _, _, err := cold.Sync(ctx, s.repo, s.head(), o); err != nil {
				t.Fatal(err)
			}
			// and the checks tables (claims, findings), also where the
			// changelog at head does not load
			for _, x := range []*Index{ix, cold} {
				if _, err := x.Check(ctx, s.repo, CheckOptions{Claims: true, Findings: true}); err != nil {
					t.Fatalf("seed %d after %v: checks: %v", seed, did, err)
				}
			}
			if a, b := tables(t, ix), tables(t, cold); a != b {
				t.Fatalf("seed %d after %v: the tables differ from an index built at once:\n%s", seed, did, firstDiff(a, b))
			}
			if a, b := storedAnswers(t, ix, s.head(), o), storedAnswers(t, cold, s.head(), o); a != b {
				t.Fatalf("seed %d after %v: the stored answers differ from an index built at once:\n%s", seed, did, firstDiff(a, b))
			}
			// the recipe history the index restores (stored as the
			// updates extended it, not replayed) is the one git gives
			rh, _, err := ix.History(ctx, s.repo, s.head(), provenance.PartsAll, o)
			if err != nil {
				t.Fatal(err)
			}
			gh, err := provenance.Build(ctx, s.repo, provenance.Options{Head: s.head(), Parts: provenance.PartsAll, IgnoreRevs: o.IgnoreRevs})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := recipeHistory(t, rh), recipeHistory(t, gh); a != b {
				t.Fatalf("seed %d after %v: the restored recipe history differs from git's:\n%s", seed, did, firstDiff(a, b))
			}
			cold.Close() // many seeds would hold many files open
		}
	}
}

// recipeHistory renders a history's recipe events (every key's, the
// deleted ones' too), notes, and what it says of the keys at head and of
// the keys touched in its second half.
func recipeHistory(t *testing.T, h *provenance.History) string {
	t.Helper()
	head, mid := len(h.Chain)-1, len(h.Chain)/2
	out := []any{h.Notes, h.RecipeKeysAt(head), h.KeyPlaces(head), h.KeyPlacesSince(mid), h.KeysChangedAfter(mid)}
	for _, k := range slices.Sorted(maps.Keys(h.Keys)) {
		out = append(out, k, h.Keys[k].Events())
	}
	j, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// storedAnswers renders the stored audit and the stored blame of every
// recipe at head.
func storedAnswers(t *testing.T, ix *Index, head plumbing.Hash, o Options) string {
	t.Helper()
	ctx := context.Background()
	rep, err := ix.CachedAudit(ctx, head, o)
	if err != nil {
		t.Fatal(err)
	}
	out := []any{rep}
	res, err := ix.Query(ctx, `SELECT key FROM recipes_at_head`)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, row := range res.Rows {
		keys = append(keys, row[0].(string))
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, err := ix.CachedBlame(ctx, head, k, o)
		if err != nil {
			t.Fatalf("stored blame of %s: %v", k, err)
		}
		out = append(out, b, b.Notes) // (a report's notes are not in its JSON)
	}
	j, _ := json.MarshalIndent(out, "", " ")
	return string(j)
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			lo := max(0, i-30)
			return fmt.Sprintf("line %d:\n%s\n%s\n--- context a:\n%s\n--- context b:\n%s", i+1, al[i], bl[i], strings.Join(al[lo:min(i+8, len(al))], "\n"), strings.Join(bl[lo:min(i+8, len(bl))], "\n"))
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}
