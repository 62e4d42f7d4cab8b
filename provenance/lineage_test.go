package provenance

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
)

// lineagesOf is what buildLineages decided, in a comparable form.
func lineagesOf(h *History) []string {
	out := make([]string, 0, len(h.Lineages)+len(h.Notes))
	for _, l := range h.Lineages {
		out = append(out, fmt.Sprintf("%d %+v", l.ID, l.Events))
	}
	for _, n := range h.Notes {
		out = append(out, fmt.Sprintf("note %d %s", n.Seq, n.Message))
	}
	return out
}

// sameEitherWay builds once with the switch *sw set to plain (the way
// without the shortcut under test) and once as it is, and wants the same
// record of both, of at least min items.
func sameEitherWay(t *testing.T, sw *bool, plain bool, min int, build func() *History, record func(*History) []string) {
	t.Helper()
	was := *sw
	*sw = plain
	want := record(build())
	*sw = was
	got := record(build())
	if len(want) < min {
		t.Fatalf("only %d items recorded: the history does not exercise the shortcut", len(want))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the shortcut changes the result:\n got %q\nwant %q", got, want)
	}
}

// corpusBuild builds the shipped sample's history.
func corpusBuild(t *testing.T, o Options) func() *History {
	r, head := openCorpus(t)
	o.Head = head
	return func() *History {
		h, err := Build(context.Background(), r, o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
}

// TestLineageHintsChangeNothing: random changelog histories (appends,
// insertions in the middle, removals, edits, pr-link fixes, swaps,
// duplicates, versions that do not load) give the same lineages whether
// or not buildLineages starts after the blocks the splitter kept.
func TestLineageHintsChangeNothing(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			s := newScripted(t)
			var es []string
			next := 0
			newEntry := func() string {
				next++
				return entry(fmt.Sprintf("k%d", rng.Intn(8)), fmt.Sprintf("change %d", rng.Intn(next+3)), pull(100+next))
			}
			for c := 0; c < 40; c++ {
				text := ""
				switch op := rng.Intn(9); {
				case op < 3 || len(es) < 3:
					es = append(es, newEntry())
				case op == 3:
					es = slices.Insert(es, rng.Intn(len(es)), newEntry())
				case op == 4:
					i := rng.Intn(len(es))
					es = slices.Delete(es, i, i+1)
				case op == 5:
					es[rng.Intn(len(es))] = newEntry() // an edit, or a new entry in place
				case op == 6:
					i, j := rng.Intn(len(es)), rng.Intn(len(es))
					es[i], es[j] = es[j], es[i]
				case op == 7:
					es = append(es, es[rng.Intn(len(es))]) // a duplicate
				default:
					text = file(es...) + "- config-keys: [unclosed\n" // does not load
				}
				if text == "" {
					text = file(es...)
				}
				s.commit(fmt.Sprintf("c%d (#%d)", c, 100+c), map[string]string{"perf-changelog.yaml": text})
			}
			sameEitherWay(t, &lineageHints, false, 5, func() *History { return s.build(Options{Parts: PartChangelog}) }, lineagesOf)
		})
	}
}

// TestCorpusLineageHintsChangeNothing is the same on the real history
// (mid-file insertions, three versions that do not load).
func TestCorpusLineageHintsChangeNothing(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("builds the corpus's changelog history twice: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	sameEitherWay(t, &lineageHints, false, 700, corpusBuild(t, Options{Parts: PartChangelog}), lineagesOf)
}

// TestKeyInTwoFiles: a recipe key that two master configs both hold is
// the first file's (files in path order), and follows the key as it
// leaves that file and comes back, at every revision.
func TestKeyInTwoFiles(t *testing.T) {
	s := newScripted(t)
	const key = "dsr1-fp8-mi355x-sglang"
	other := strings.Replace(recipeA, "v0.5.9", "v0.5.8", 1)
	s.commit("Add to nvidia (#1)", map[string]string{"configs/nvidia-master.yaml": other})
	s.commit("Add to amd too (#2)", map[string]string{"configs/amd-master.yaml": recipeA})
	s.commit("Drop from amd (#3)", map[string]string{"configs/amd-master.yaml": "{}\n"})
	s.commit("Back in amd (#4)", map[string]string{"configs/amd-master.yaml": recipeA})
	s.commit("Drop from nvidia (#5)", map[string]string{"configs/nvidia-master.yaml": "{}\n"})
	h := s.build(Options{Parts: PartRecipes})
	for _, c := range []struct {
		commit, file, image string
	}{
		{"Add to nvidia (#1)", "configs/nvidia-master.yaml", "v0.5.8"},
		{"Add to amd too (#2)", "configs/amd-master.yaml", "v0.5.9"},
		{"Drop from amd (#3)", "configs/nvidia-master.yaml", "v0.5.8"},
		{"Back in amd (#4)", "configs/amd-master.yaml", "v0.5.9"},
		{"Drop from nvidia (#5)", "configs/amd-master.yaml", "v0.5.9"},
	} {
		rep, err := h.Blame(key, s.commits[c.commit])
		if err != nil {
			t.Fatalf("%s: %v", c.commit, err)
		}
		image := ""
		for _, f := range rep.Fields {
			if f.Path == "image" {
				image = f.Value
			}
		}
		if rep.File != c.file || !strings.Contains(image, c.image) {
			t.Errorf("at %q: %s in %s, want %s in %s", c.commit, image, rep.File, c.image, c.file)
		}
	}
}

// recipeEventsOf is what buildRecipes recorded, in a comparable form.
func recipeEventsOf(h *History) []string {
	id := func(b *block) string {
		if b == nil {
			return "-"
		}
		return fmt.Sprintf("%d:%x", b.id, sha256.Sum256([]byte(b.text)))
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(h.Keys)) {
		for _, r := range h.Keys[k].raw {
			out = append(out, fmt.Sprintf("%s %v %d %s>%s %s %s %s", k, r.kind, r.seq, r.from, r.to, r.file, id(r.old), id(r.b)))
		}
	}
	return out
}

// TestRecipeStateShortcutChangesNothing: random master-config histories
// (two files, keys added, edited, removed, moved between the files,
// duplicated inside a file) record the same recipe events whether the
// touched keys are set from the new text alone or by scanning the file.
func TestRecipeStateShortcutChangesNothing(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			s := newScripted(t)
			files := []string{"configs/amd-master.yaml", "configs/nvidia-master.yaml"}
			type rec struct{ key, image string }
			content := make([][]rec, len(files))
			for c := 0; c < 40; c++ {
				f := rng.Intn(len(files))
				cs := content[f]
				r := rec{fmt.Sprintf("k%d-mi355x-sglang", rng.Intn(6)), fmt.Sprintf("img:v%d", c)}
				switch op := rng.Intn(6); {
				case op < 2 || len(cs) == 0:
					cs = slices.Insert(cs, rng.Intn(len(cs)+1), r)
				case op == 2:
					cs[rng.Intn(len(cs))].image = r.image
				case op == 3:
					i := rng.Intn(len(cs))
					cs = slices.Delete(cs, i, i+1)
				case op == 4 && rng.Intn(2) == 0:
					cs = append(cs, cs[rng.Intn(len(cs))]) // the same key twice
					cs[len(cs)-1].image = r.image
				case op == 4: // twice in the new text
					cs = slices.Insert(cs, rng.Intn(len(cs)+1), r, rec{r.key, r.image + "b"})
				default: // a key moves to the other file
					i := rng.Intn(len(cs))
					g := 1 - f
					content[g] = append(content[g], cs[i])
					cs = slices.Delete(cs, i, i+1)
				}
				content[f] = cs
				texts := map[string]string{}
				for i, cs := range content {
					var b strings.Builder
					for _, r := range cs {
						fmt.Fprintf(&b, "%s:\n  image: %s\n  model: m\n  runner: mi355x\n", r.key, r.image)
					}
					if b.Len() == 0 {
						b.WriteString("{}\n")
					}
					texts[files[i]] = b.String()
				}
				s.commit(fmt.Sprintf("c%d (#%d)", c, 100+c), texts)
			}
			sameEitherWay(t, &wholeRebuild, true, 10, func() *History { return s.build(Options{Parts: PartRecipes}) }, recipeEventsOf)
		})
	}
}

// TestCorpusRecipeStateShortcutChangesNothing is the same on the real
// history (keys in both master configs, the move from .github/configs).
func TestCorpusRecipeStateShortcutChangesNothing(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("builds the corpus's recipe history twice: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	sameEitherWay(t, &wholeRebuild, true, 1000, corpusBuild(t, Options{Parts: PartRecipes}), recipeEventsOf)
}
