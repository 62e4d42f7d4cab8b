package draft

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/changelog/load"
	"github.com/perflog/perflog/internal/testcorpus"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// TestDraftAgainstAuthors replays changelog new on real history: for a
// sample of commits that changed recipes and added entries, the entries
// the author wrote are set aside, the change is drafted, and the draft is
// compared with what the author wrote: the same config-keys (after glob
// resolution), and the author's image, env and concurrency facts present
// in the drafted bullets. The rates are logged and guarded from below.
func TestDraftAgainstAuthors(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("corpus replay: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, _ := testcorpus.Open(t, nil)
	r.SetReadCache(16 << 20) // both sides of hundreds of commits
	head, _ := r.Resolve("main")
	s := &config.Settings{}
	var commits, sameKeys, coveredKeys, passed, asAuthor, failures int
	facts := map[string][2]int{} // kind → {present, total}
	missedEnv, missedConc := 0, 0
	n := 0
	err := r.FirstParent(context.Background(), gitscan.WalkOptions{From: head}, func(nd gitscan.Node) error {
		if len(nd.Parents) == 0 {
			return nil
		}
		if n++; n%3 != 0 {
			return nil // a sample
		}
		ch, err := load.Change(r, s, nd.Parents[0], nd.Hash, "base", "head")
		if err != nil {
			return err
		}
		if !ch.Touched(s.ChangelogPath()) {
			return nil
		}
		baseRaw, _ := readOptional(t, r, nd.Parents[0], s.ChangelogPath())
		headRaw, _ := readOptional(t, r, nd.Hash, s.ChangelogPath())
		bf, err1 := changelog.Parse(s.ChangelogPath(), baseRaw)
		hf, err2 := changelog.Parse(s.ChangelogPath(), headRaw)
		if err1 != nil || err2 != nil || bf == nil || hf == nil {
			return nil
		}
		added := changelog.Align(bf, hf).Added
		if len(added) == 0 {
			return nil
		}
		drafts, err := Entries(ch, Options{PRLink: "x"})
		if err != nil || len(drafts) == 0 {
			return nil // the commit changed no recipe the resolver sees
		}
		commits++
		headKeys, _ := ch.Head.Keys()
		author := map[string]bool{}
		var bullets []string
		for _, e := range added {
			for _, p := range e.Strings(changelog.FieldConfigKeys) {
				re := config.GlobRegexp(p)
				for _, k := range headKeys {
					if re.MatchString(k) {
						author[k] = true
					}
				}
			}
			bullets = append(bullets, e.Strings(changelog.FieldDescription)...)
		}
		// the draft appended to the base changelog passes verify
		newHead, _, err := changelog.AppendEntries(s.ChangelogPath(), baseRaw, drafts, changelog.AppendOptions{Base: baseRaw, HaveBase: true, PRLink: "x"})
		if err == nil {
			for i := range drafts {
				drafts[i].PRLink = "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX"
			}
			newHead, _, _ = changelog.AppendEntries(s.ChangelogPath(), baseRaw, drafts, changelog.AppendOptions{Base: baseRaw, HaveBase: true})
			files, _ := load.MasterFiles(r, s, nd.Hash)
			m, merr := config.LoadMaster(files)
			in := &changelog.Input{Path: s.ChangelogPath(), Base: baseRaw, Head: newHead, BaseRev: "base", HeadRev: "head", PR: 1,
				Master: m, MasterErr: merr, Settings: s, Change: ch,
				BaseMaster: func() (*config.Master, error) { return load.Master(r, s, nd.Parents[0]) }}
			rep := changelog.Verify(in, changelog.ProfileFull)
			if rep.OK() {
				passed++
				asAuthor++
			} else {
				// the author's own entry at this commit: a base that cannot
				// be appended to cleanly (two blank lines at its end), a
				// recipe whose launcher drops a variable, fail it too
				author := *in
				author.Head, author.PR = headRaw, 0 // its link names its own PR
				if !changelog.Verify(&author, changelog.ProfileFull).OK() {
					asAuthor++
				} else if failures < 8 {
					failures++
					for _, f := range rep.Findings {
						if f.Severity == changelog.Error && f.Suppressed == "" {
							t.Logf("%s: the draft fails verify where the author's entry passes: %s %s", nd.Hash, f.Rule, f.Message)
							break
						}
					}
				}
			}
		}
		drafted := map[string]bool{}
		var text strings.Builder
		for _, d := range drafts {
			for _, k := range d.ConfigKeys {
				drafted[k] = true
			}
			text.WriteString(strings.Join(d.Description, "\n") + "\n")
		}
		same := len(author) == len(drafted)
		covered := true
		for k := range author {
			same = same && drafted[k]
			covered = covered && drafted[k]
		}
		if same {
			sameKeys++
		}
		if covered {
			coveredKeys++
		}
		dt := text.String()
		// the authors' env facts the change bears out (an author may name
		// a variable the change replaced, or another framework's)
		var ces []claims.Entry
		for i, e := range added {
			in := e.ClaimInput()
			in.Index = i + 1
			ces = append(ces, in)
		}
		confirmed := map[string]bool{}
		for _, res := range claims.Check(ch, ces) {
			if res.Kind == claims.KindEnv && res.Verdict == claims.Confirmed {
				confirmed[res.Name] = true
			}
		}
		for _, c := range claims.Extract(bullets) {
			if !c.Strong || c.Negated {
				continue
			}
			var needle string
			switch c.Kind {
			case claims.KindImage:
				_, tag, _ := claims.SplitRef(c.Value)
				needle = tag
			case claims.KindEnv:
				needle = c.Name
			case claims.KindConc:
				if len(c.Range) == 2 {
					needle = ""
					for _, v := range c.Range {
						if !strings.Contains(dt, itoa(v)) {
							needle = "\x00"
						}
					}
				} else if len(c.Conc) > 0 {
					needle = itoa(c.Conc[0])
				}
			default:
				continue
			}
			f := facts[c.Kind]
			f[1]++
			if needle != "\x00" && strings.Contains(dt, needle) {
				f[0]++
			} else if c.Kind == claims.KindConc {
				if missedConc++; missedConc <= 10 {
					t.Logf("%s: the author says %q; the draft does not:\n%s", nd.Hash.String()[:10], c.Text, dt)
				}
			}
			facts[c.Kind] = f
			if c.Kind == claims.KindEnv && confirmed[c.Name] {
				f := facts["confirmed env"]
				f[1]++
				if strings.Contains(dt, needle) {
					f[0]++
				} else if missedEnv++; missedEnv <= 10 {
					t.Logf("%s: the change sets %s as the author says (%q); the draft does not say so:\n%s", nd.Hash.String()[:10], c.Name, c.Text, dt)
				}
				facts["confirmed env"] = f
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pct := func(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }
	t.Logf("%d commits: same config-keys %.0f%%, author's keys all drafted %.0f%%; the draft passes verify in %.0f%%, and wherever the author's own entry passes in %.1f%%",
		commits, pct(sameKeys, commits), pct(coveredKeys, commits), pct(passed, commits), pct(asAuthor, commits))
	for k, f := range facts {
		t.Logf("%s facts of the author's bullets present in the draft: %d/%d (%.0f%%)", k, f[0], f[1], pct(f[0], f[1]))
	}
	// (the floors are what issue 28 asked for, or what was measured where
	// that is higher: the sample is fixed, so they do not drift. The env
	// floor is the measure since claims.Version 5, which reads 47 env facts
	// in the authors' bullets where version 4 read 45: the draft says 36 of
	// them under both, 80% then, 77% now. Passing verify: 98.4% until stop
	// 53, 98.0% since: the dry run now gives a server the environment of
	// the container it runs in, and b76e5afcab's draft states
	// CUDA_VISIBLE_DEVICES=0, which one arm sets and point 1 does not.
	// The conc facts: claims v9 reads 129 in the authors' bullets where v8
	// read 120 (a remark after ", which" or between dashes is its own
	// clause now); the draft states 123 of them since stop 54's drafts,
	// 95%. Stop 57: 122 and 38 of the 45 confirmed env facts, one fewer
	// each, both found by chance before: 1338e34689's "conc-list
	// [64,96,128]" in a dump of 41 variables (MC_MASTER_THREADS=64), now
	// said by kind; 17220ce03f's AIPERF_EXTRA_INPUTS, which the
	// repository held with the same value before the change, so no news)
	if commits < 200 || pct(coveredKeys, commits) < 95 || pct(passed, commits) < 97.5 || pct(asAuthor, commits) < 99.5 ||
		pct(facts[claims.KindImage][0], facts[claims.KindImage][1]) < 90 || pct(facts[claims.KindConc][0], facts[claims.KindConc][1]) < 94.5 ||
		pct(facts[claims.KindEnv][0], facts[claims.KindEnv][1]) < 76.5 || pct(facts["confirmed env"][0], facts["confirmed env"][1]) < 84 {
		t.Errorf("the draft fell below its measured agreement with the authors")
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// readOptional is a file of commit c, nil where it has none.
func readOptional(t testing.TB, r *gitscan.Repo, c plumbing.Hash, p string) ([]byte, error) {
	t.Helper()
	b, err := r.ReadFile(c, p)
	if errors.Is(err, gitscan.ErrNotFound) {
		return nil, nil
	}
	return b, err
}
