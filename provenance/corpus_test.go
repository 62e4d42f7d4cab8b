package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"gopkg.in/yaml.v3"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe/dryrun"
)

// openCorpus opens the shipped sample (testdata/corpus/NOTICE).
func openCorpus(t testing.TB) (*gitscan.Repo, plumbing.Hash) {
	t.Helper()
	return testcorpus.Open(t, nil)
}

// naiveIdentity is an entry's identity computed independently of perflog's
// loader: yaml.v3 into a map, pr-link dropped, JSON with sorted keys.
func naiveIdentity(e map[string]any) string {
	c := map[string]any{}
	for k, v := range e {
		if k != "pr-link" {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// TestCorpusAuditAgreesWithNaiveScan cross-checks the audit against an
// independent computation on the real history: every version of the
// changelog loaded whole with yaml.v3 (no split, no memo, no alignment);
// an entry was introduced where its identity's count last rose. The two
// must agree on every entry at HEAD, except where perflog attributes an
// entry to a version that did not load (the naive scan, which skips such
// versions, then names the next one).
func TestCorpusAuditAgreesWithNaiveScan(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("loads 810 versions of a 400 KB file: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, _, h, rep := corpusAudit(t)

	// the naive scan: versions oldest first, decoded on all cores
	type nversion struct {
		seq     int
		entries []map[string]any
		ok      bool
	}
	vs := make([]nversion, 0, len(h.cl.vers))
	for _, v := range h.cl.vers {
		vs = append(vs, nversion{seq: v.Seq})
	}
	blobs := map[int]plumbing.Hash{}
	for i, v := range h.cl.vers {
		blobs[i] = v.Blob
	}
	var wg sync.WaitGroup
	work := make(chan int)
	var mu sync.Mutex
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				mu.Lock()
				data, err := r.ReadBlob(blobs[i])
				mu.Unlock()
				if err != nil {
					t.Error(err)
					continue
				}
				var es []map[string]any
				vs[i].ok = yaml.Unmarshal(data, &es) == nil
				vs[i].entries = es
			}
		}()
	}
	for i := range vs {
		if !blobs[i].IsZero() {
			work <- i
		}
	}
	close(work)
	wg.Wait()

	rises := map[string][]int{} // identity → seqs where its count rose, per live instance
	ever := map[string][]int{}  // identity → every seq where its count rose
	dup := map[string]bool{}    // identities that had two instances at once
	count := map[string]int{}
	var invalid []int
	for _, v := range vs {
		if !v.ok {
			invalid = append(invalid, v.seq)
			continue
		}
		now := map[string]int{}
		for _, e := range v.entries {
			now[naiveIdentity(e)]++
		}
		for id, n := range now {
			for count[id] < n {
				rises[id] = append(rises[id], v.seq)
				ever[id] = append(ever[id], v.seq)
				count[id]++
			}
			if n > 1 {
				dup[id] = true
			}
		}
		for id, n := range count {
			for n > now[id] {
				rises[id] = rises[id][:len(rises[id])-1]
				n--
			}
			count[id] = n
		}
	}
	// yaml.v3 refuses what PyYAML's unique-key loader refuses, and more
	for _, n := range h.Notes {
		if !slices.Contains(invalid, n.Seq) {
			t.Errorf("perflog cannot load the changelog at %s but yaml.v3 can", n.Commit)
		}
	}
	last := vs[len(vs)-1]
	mine := map[string][]int{}
	unloadable := 0
	for i, e := range rep.Entries {
		id := naiveIdentity(last.entries[i])
		intro, ok := h.Introduction(h.EntriesAt(len(h.Chain) - 1)[i].Lin, len(h.Chain)-1)
		if !ok {
			t.Fatalf("entry %d has no introduction", e.Index)
		}
		if intro.Unloadable {
			unloadable++
			continue
		}
		mine[id] = append(mine[id], intro.Seq)
	}
	agree, differ := 0, 0
	for id, seqs := range mine {
		want := append([]int(nil), rises[id]...)
		sort.Ints(seqs)
		sort.Ints(want)
		if len(want) < len(seqs) {
			t.Errorf("identity %.80s: naive scan has %d instances, audit %d", id, len(want), len(seqs))
			continue
		}
		// an unloadable-version attribution removes one instance
		want = want[len(want)-len(seqs):]
		for k := range seqs {
			switch {
			case seqs[k] == want[k]:
				agree++
			case dup[id] && slices.Contains(ever[id], seqs[k]):
				// identical entries coexisted: which one survived is
				// decided by position and pr-link, which the naive
				// scan (last in, first out) does not see
				agree++
			default:
				differ++
				t.Errorf("identity %.100s: audit says seq %d (%s), naive scan %d (%s)", id, seqs[k], h.Chain[seqs[k]], want[k], h.Chain[want[k]])
			}
		}
	}
	if agree+unloadable != len(rep.Entries) || differ != 0 || unloadable > 2 {
		t.Errorf("%d agree, %d differ, %d attributed to unloadable versions, of %d entries", agree, differ, unloadable, len(rep.Entries))
	}
	t.Logf("%d of %d entries agree with the naive scan; %d attributed to a version that does not load", agree, len(rep.Entries), unloadable)
}

// TestCorpusAuditDistribution pins the verdicts on the real history (see
// the package documentation for what each means); a change here is a
// change of behaviour to explain.
func TestCorpusAuditDistribution(t *testing.T) {
	_, _, h, rep := corpusAudit(t)
	want := map[Verdict]int{VerdictOK: 693, VerdictCorrected: 37, VerdictRelanded: 4, VerdictEdited: 2,
		VerdictBackfilled: 11, VerdictPlaceholder: 1, VerdictNoPR: 16, VerdictMismatch: 6, VerdictRetrigger: 2}
	total := 0
	for v, n := range want {
		total += n
		if rep.Summary[v] != n {
			t.Errorf("%s: %d, want %d", v, rep.Summary[v], n)
		}
	}
	if len(rep.Entries) != 772 || total != 772 {
		t.Errorf("%d entries", len(rep.Entries))
	}
	// the real bug class: #2697 copied #2670's link
	for _, e := range rep.Entries {
		if e.Index == 755 && (e.Verdict != VerdictMismatch || *e.Introduced.PR != 2697 || *e.PRLinkPR != 2670) {
			t.Errorf("entry 755: %+v", e)
		}
	}
	if len(h.Notes) != 2 {
		t.Errorf("notes: %+v", h.Notes)
	}
}

// corpusAudit builds the corpus history and audits its head.
func corpusAudit(t *testing.T) (*gitscan.Repo, plumbing.Hash, *History, *AuditReport) {
	t.Helper()
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartChangelog})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.Audit(AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r, head, h, rep
}

// TestCorpusBlameAgreesWithNaiveScan cross-checks blame for every recipe
// of amd-master.yaml at HEAD: a naive scan decodes every version of the
// file with yaml.v3 and takes, per field path, the oldest commit of the
// run of versions holding the same value at the same path. Where the two
// disagree, perflog must be older (it followed a move, a reorder or a
// rename the naive scan cannot see) and the naive commit must be one at
// which perflog recorded that move for the field.
func TestCorpusBlameAgreesWithNaiveScan(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("loads every version of amd-master.yaml: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartRecipes})
	if err != nil {
		t.Fatal(err)
	}
	seq := len(h.Chain) - 1
	// versions of the amd file, newest first: the seq each run of equal
	// blobs starts at, and the file decoded (nil when it does not load)
	type ver struct {
		seq  int
		blob plumbing.Hash
		m    map[string]any
	}
	var vers []ver
	for i := len(h.cfg[0].vers) - 1; i >= 0; i-- {
		v := h.cfg[0].vers[i] // the amd-master.yaml slot
		amd := v.Blob
		if amd.IsZero() {
			break
		}
		if n := len(vers); n > 0 && vers[n-1].blob == amd {
			vers[n-1].seq = v.Seq
			continue
		}
		data, err := r.ReadBlob(amd)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if yaml.Unmarshal(data, &m) != nil {
			m = nil // does not load: skipped, as perflog carries the newer one forward
		}
		vers = append(vers, ver{v.Seq, amd, m})
	}
	agree, moved, keys := 0, 0, 0
	for _, key := range h.RecipeKeysAt(seq) {
		recipe, _ := h.RecipeAt(key, seq)
		if recipe.File != "configs/amd-master.yaml" {
			continue
		}
		keys++
		rep, err := h.Blame(key, head)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range recipe.Fields() {
			b := rep.Fields[i]
			got, _ := lookupPath(vers[0].m[key], f.Path) // (the newest version: head's)
			want := jsonOf(got)
			naive := -1
			for _, v := range vers {
				if v.m == nil {
					continue
				}
				got, ok := lookupPath(v.m[key], f.Path)
				if !ok || jsonOf(got) != want {
					break
				}
				naive = v.seq
			}
			mineSeq, _ := h.SeqOf(plumbing.NewHash(b.Commit))
			switch {
			case naive == mineSeq:
				agree++
			case followedAt(h, key, f.Path, naive, mineSeq, seq):
				moved++
			default:
				t.Errorf("%s %s = %s: blame %s (seq %d), naive scan seq %d", key, f.Path, f.Value, b.Commit[:10], mineSeq, naive)
			}
		}
	}
	// (17 fields follow a rewritten search-space row by its parallelism
	// where the naive scan follows the position: 998 agree, 331 past a
	// move, at the sample's head)
	if keys < 40 || agree < 990 {
		t.Errorf("checked %d keys, %d fields agree", keys, agree)
	}
	t.Logf("%d amd keys: %d fields agree with the naive scan, %d attributed past a move/rename the naive scan cannot follow", keys, agree, moved)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// followedAt reports whether perflog recorded, between the two
// attributions of a field (seqs a and b) and HEAD, a move or rename that
// maps the field (at HEAD path p) to another path or key: the naive scan
// compares values at the same path only.
func followedAt(h *History, key, p string, a, b, head int) bool {
	lo := min(a, b)
	cur := p
	for _, e := range h.keyTimeline(key, head) {
		if e.Seq < lo {
			return false
		}
		if e.Kind == EvRenamed && e.From != "" {
			return true
		}
		if e.Diff == nil {
			continue
		}
		if old := e.Diff.OldPath(cur); old != cur {
			return true
		}
	}
	return false
}

// lookupPath reads a field path out of a decoded recipe.
func lookupPath(v any, p string) (any, bool) {
	for _, seg := range splitPath(p) {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			i := 0
			for _, c := range seg {
				if c < '0' || c > '9' {
					return nil, false
				}
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func splitPath(p string) []string {
	var out []string
	cur := ""
	for _, c := range p {
		switch c {
		case '.', '[', ']':
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
		default:
			cur += string(c)
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// TestCorpusChunkedParseMatchesWhole parses every distinct recipe of the
// real history piecewise (chunk.go) and whole: the values must be equal,
// and most recipes must take the piecewise path. One memo serves them all,
// and a sample of its subtrees is read again from their texts alone.
func TestCorpusChunkedParseMatchesWhole(t *testing.T) {
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartRecipes})
	if err != nil {
		t.Fatal(err)
	}
	ch := newChunks()
	seen := map[*block]bool{}
	pieces, whole := 0, 0
	for _, sl := range h.cfg {
		for _, v := range sl.vers {
			for _, b := range v.Mid {
				if seen[b] {
					continue
				}
				seen[b] = true
				full, err := pyyaml.Load([]byte(b.text), pyyaml.Options{})
				k, pv, ok := ch.parseRecipe(b.text)
				if !ok {
					whole++
					continue
				}
				pieces++
				if err != nil || full.Kind != pyyaml.Map || len(full.Pairs) != 1 {
					t.Fatalf("piecewise parse accepted a recipe a whole parse refuses (%v):\n%s", err, b.text)
				}
				if k != full.Pairs[0].Key.Str || pyyaml.Canonical(pv) != pyyaml.Canonical(full.Pairs[0].Value) {
					t.Fatalf("piecewise parse differs:\n%s\npiecewise: %s\nwhole:     %s", b.text, pyyaml.Render(pv), pyyaml.Render(full.Pairs[0].Value))
				}
				// placed: equal, and every node on the line a whole parse
				// puts it
				_, lv, ok := ch.placeRecipe(b.text)
				if !ok || pyyaml.Canonical(lv) != pyyaml.Canonical(pv) {
					t.Fatalf("placed parse differs (ok=%v):\n%s", ok, b.text)
				}
				if where := otherLines(lv, full.Pairs[0].Value, ""); where != "" {
					t.Fatalf("placed parse puts %s:\n%s", where, b.text)
				}
			}
		}
	}
	if pieces < 1500 || whole > 5 {
		t.Errorf("%d recipes parsed piecewise, %d whole", pieces, whole)
	}
	checkMemo(t, ch, 5)
	t.Logf("%d distinct recipes: %d piecewise, %d whole", pieces+whole, pieces, whole)
}

// otherLines describes the first node of a that is not on the line of its
// counterpart in b ("" when none is).
func otherLines(a, b *pyyaml.Value, path string) string {
	if a.Line != b.Line {
		return fmt.Sprintf("%q on line %d, not %d", path, a.Line, b.Line)
	}
	for i := range a.Items {
		if w := otherLines(a.Items[i], b.Items[i], fmt.Sprintf("%s[%d]", path, i)); w != "" {
			return w
		}
	}
	for i, p := range a.Pairs {
		q := b.Pairs[i]
		if w := otherLines(p.Key, q.Key, path+" key "+p.Key.Str); w != "" {
			return w
		}
		if w := otherLines(p.Value, q.Value, path+"."+p.Key.Str); w != "" {
			return w
		}
	}
	return ""
}

// TestCorpusClaims runs the claim checker over the real history (audit
// --claims) and pins what it reports. Each contradicted claim below was
// inspected against its commit (see the issue note): the committed files
// say otherwise. A change here is a change of behaviour to explain.
func TestCorpusClaims(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("claims over the whole history: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, head, _, rep := corpusAudit(t)
	raw, err := r.ReadFile(head, rep.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckAuditClaims(context.Background(), r, &config.Settings{}, rep, raw, dryrun.Options{}); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]int{}
	entries := map[int]bool{}
	withClaims := 0
	got := map[string]bool{}
	for _, e := range rep.Entries {
		if len(e.Claims) > 0 {
			withClaims++
		}
		for _, c := range e.Claims {
			verdicts[c.Verdict]++
			if c.Verdict == claims.Contradicted {
				entries[e.Index] = true
				got[fmt.Sprintf("%d %s %s", e.Index, c.Kind, c.Text)] = true
				if c.Reason == "" {
					t.Errorf("entry %d: contradicted without a reason: %+v", e.Index, c)
				}
			}
		}
	}
	t.Logf("%d entries with claims; verdicts %v; %d entries contradicted", withClaims, verdicts, len(entries))
	// every one read by hand and judged true (docs/dev/claims-precision.md;
	// claims v8 added #931, #947 and #1003 and dropped #1347's re-run;
	// v9 added #1946's "from vllm/vllm-openai-rocm:minimax-m3", an image
	// only a comment named, and dropped #1447's --fp8-gemm-runner-backend:
	// the script passes SGLang's --fp8-gemm-backend, whose destination is
	// fp8_gemm_runner_backend, so the claim is unverified; v12 added
	// #1156's "TP8 conc 4-128" and "TP8 conc 4-32", whose TP8 rows run
	// 1-64 plus 128, and 1-32)
	if verdicts[claims.Contradicted] != 50 || len(entries) != 43 {
		t.Errorf("contradicted: %d claims in %d entries, want 50 in 43", verdicts[claims.Contradicted], len(entries))
	}
	if verdicts[claims.Confirmed] < 2500 {
		t.Errorf("confirmed: %d", verdicts[claims.Confirmed])
	}
	// the patterns, one each
	for _, want := range []string{
		"671 env VLLM_MINIMAX_M3_MSA_DECODE_BACKEND=cutlass", // env var replaced by a flag later in the PR
		"598 image to v0.25.0",                               // the image moved on to v0.25.1 in the PR
		"254 conc conc 4-128",                                // the tp2/ep1 rows stop at 64
		"372 parallel DEP8",                                  // no DEP8 row was committed
		"602 conc conc=48",                                   // "across TP8 +/- DPA +/- HiCache": one row runs 48
		"218 conc concurrency 4-64",                          // the seq-len-configs layout: the day-0 rows run conc 1
		// claims v5 (docs/dev/claims-precision.md, 2026-12-06)
		"325 flag --gpu-memory-utilization from 0.95 to 0.90", // both scripts still pass 0.95
		"46 conc concurrency 4-64",                            // the new recipe's rows run 4-512
		"673 conc conc-list [4, 8, 10, 12, 14, 16]",           // the committed sweep is [1, 4, 8] and [10]
		"677 conc concurrency 1, 2, and 16",                   // the TP4 rows run no 16
	} {
		if !got[want] {
			t.Errorf("missing contradicted claim %q", want)
		}
	}
}

// TestCorpusClaimsWhereTheChangelogDoesNotLoad: at a commit whose
// changelog does not load, the audit lists the entries of the version
// before it, and their claims are read from that version's text (they
// failed with the parse error of the commit's own text).
func TestCorpusClaimsWhereTheChangelogDoesNotLoad(t *testing.T) {
	r, _, h, _ := corpusAudit(t)
	rev, err := r.Resolve("9c8b6dec07")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.Audit(AuditOptions{Rev: rev})
	if err != nil {
		t.Fatal(err)
	}
	own, err := r.ReadFile(rev, rep.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changelog.Parse(rep.Path, own); err == nil {
		t.Fatal("the changelog at 9c8b6dec07 loads; the test needs one that does not")
	}
	raw, err := AuditText(r, rep)
	if err != nil {
		t.Fatal(err)
	}
	f, err := changelog.Parse(rep.Path, raw)
	if err != nil || len(f.Entries) != len(rep.Entries) || len(rep.Notes) == 0 {
		t.Fatalf("the audited version: %v, %d entries against %d audited, %d notes", err, len(f.Entries), len(rep.Entries), len(rep.Notes))
	}
	last := len(rep.Entries)
	err = CheckAuditClaimsOf(context.Background(), r, &config.Settings{}, rep, raw, dryrun.Options{}, func(e *AuditEntry) bool { return e.Index > last-20 }, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range rep.Entries {
		n += len(e.Claims)
	}
	if n == 0 {
		t.Error("no claim of the last 20 entries was checked")
	}
}

// TestCorpusEntryLines: the lines of the entries at Head, which Build
// keeps from cutting that version, are where yaml.v3 finds the list's
// items; and a version read again from git (an older one, through
// placedOf) gives its items' lines too.
func TestCorpusEntryLines(t *testing.T) {
	r, head := openCorpus(t)
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartChangelog})
	if err != nil {
		t.Fatal(err)
	}
	if h.headLinesBlob.IsZero() {
		t.Fatal("Build kept no lines for the changelog at Head")
	}
	last := len(h.Chain) - 1
	for _, seq := range []int{last, last - 1, last - 200} {
		at := h.EntriesAt(seq)
		var v version
		for _, x := range h.cl.vers {
			if x.Seq <= seq {
				v = x
			}
		}
		data, err := r.ReadBlob(v.Blob)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		items := doc.Content[0].Content
		if len(at) != len(items) {
			t.Fatalf("seq %d: %d entries, yaml.v3 reads %d items", seq, len(at), len(items))
		}
		for i, e := range at {
			if e.Line != items[i].Line {
				t.Fatalf("seq %d, entry %d: line %d, yaml.v3 says %d", seq, i+1, e.Line, items[i].Line)
			}
		}
	}
}

// TestCorpusLaunchHistory: the case on the shipped history. #1243
// changed only dsr1-fp8-mi355x-sglang's script (--num-continuous-decode-
// steps 4 → 8); the log lists it as a launch change under that commit. A
// commit that edited the script without changing what it launches (#906
// added GPU monitoring) is no change of the recipe.
func TestCorpusLaunchHistory(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	const key = "dsr1-fp8-mi355x-sglang"
	h, err := Build(context.Background(), r, Options{Head: head, Parts: PartsAll, Keys: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := h.Launches(context.Background(), key, head, LaunchOptions{Repo: r})
	if err != nil {
		t.Fatal(err)
	}
	items, err := h.Log(key, LogOptions{Launches: vs})
	if err != nil {
		t.Fatal(err)
	}
	byPR := map[int]LogItem{}
	for _, it := range items {
		if it.PR != nil {
			byPR[*it.PR] = it
		}
	}
	it, ok := byPR[1243]
	if !ok || it.Kind != EvLaunch || len(it.Changes) != 1 ||
		it.Changes[0].Path != "launch.flags.--num-continuous-decode-steps" || it.Changes[0].Old != "4" || it.Changes[0].New != "8" {
		t.Fatalf("#1243: %+v", it)
	}
	if len(it.Entries) == 0 {
		t.Errorf("#1243's own entry names the key: %+v", it)
	}
	if it, ok := byPR[906]; ok {
		t.Errorf("#906 launches the same, yet is listed: %+v", it)
	}
	// a walk resumed from one that stopped at an older commit (as an
	// index stores it) ends where a walk from the start does
	mid := h.Chain[len(h.Chain)*2/3]
	part, err := h.LaunchesFrom(context.Background(), key, mid, LaunchOptions{Repo: r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := h.LaunchesFrom(context.Background(), key, head, LaunchOptions{Repo: r}, part)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(whole.Versions), fmt.Sprint(vs); a != b || len(whole.Versions) != len(vs) {
		t.Fatalf("resumed walk:\n%s\nwhole walk:\n%s", a, b)
	}
	for i := range vs {
		if !maps.Equal(vs[i].Fields, whole.Versions[i].Fields) || vs[i].Commit != whole.Versions[i].Commit {
			t.Fatalf("version %d differs", i)
		}
	}
	// asked about an older commit, a walk that went further answers
	// without a dry run (the context is cancelled: a dry run would stop)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	older, err := h.LaunchesFrom(done, key, mid, LaunchOptions{Repo: r}, whole)
	if err != nil {
		t.Fatalf("the walk to an older commit dry-ran: %v", err)
	}
	if a, b := fmt.Sprint(older.Versions), fmt.Sprint(part.Versions); a != b {
		t.Fatalf("older commit from the whole walk:\n%s\nwalked to it:\n%s", a, b)
	}
	rep, err := h.BlameLaunch(key, head, vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep {
		if f.Path == "launch.flags.--num-continuous-decode-steps" && (f.Value != "8" || f.PR == nil || *f.PR != 1243) {
			t.Errorf("blame: %+v", f)
		}
	}
}
