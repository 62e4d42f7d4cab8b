package changelog

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/internal/xdiff"
)

// Change classifies the head entries against the base.
type Change struct {
	// Added are head entries with no counterpart at base, in file order.
	Added []*Entry
	// Kept pairs each historical head entry with its base entry.
	Kept []Pair
	// Modified pairs a base entry with the head entry that replaced it.
	Modified []Pair
	// Deleted are base entries with no counterpart at head.
	Deleted []*Entry
}

// Pair is a base entry and its head counterpart.
type Pair struct{ Base, Head *Entry }

// Align matches head entries to base entries by content identity (see
// Entry.Identity), not by position or pr-link: a mid-file insertion, a
// pr-link correction or a re-indent does not disturb the match. Within each
// gap between matched entries, a base and a head entry naming the same
// config-keys are a modification; what remains is deleted or added.
func Align(base, head *File) *Change {
	ids := func(f *File) []string {
		out := make([]string, len(f.Entries))
		for i, e := range f.Entries {
			out[i] = e.Identity()
		}
		return out
	}
	c := &Change{}
	xdiff.Match(ids(base), ids(head), func(i, j int) {
		c.Kept = append(c.Kept, Pair{base.Entries[i], head.Entries[j]})
	}, func(olds, news []int) {
		gb := make([]*Entry, len(olds))
		for k, i := range olds {
			gb[k] = base.Entries[i]
		}
		gh := make([]*Entry, len(news))
		for k, j := range news {
			gh[k] = head.Entries[j]
		}
		c.pairGap(gb, gh)
	})
	c.preferSameLink()
	return c
}

// preferSameLink: of base entries that read the same (a re-land repeats
// an entry word for word), the one kept is the one whose pr-link the head
// entry still has. A revert that deletes the first of two such entries
// deleted it; it did not correct the second one's link.
func (c *Change) preferSameLink() {
	swapped := false
	for i := range c.Kept {
		k := &c.Kept[i]
		link := k.Head.PRLink()
		if k.Base.PRLink() == link {
			continue
		}
		for j, d := range c.Deleted {
			if d.PRLink() == link && d.Identity() == k.Base.Identity() {
				c.Deleted[j], k.Base = k.Base, d
				swapped = true
				break
			}
		}
	}
	if swapped {
		slices.SortFunc(c.Deleted, func(a, b *Entry) int { return a.Index - b.Index })
	}
}

func (c *Change) pairGap(gb, gh []*Entry) {
	vb := make([]*pyyaml.Value, len(gb))
	for i, e := range gb {
		vb[i] = e.value
	}
	vh := make([]*pyyaml.Value, len(gh))
	for i, e := range gh {
		vh[i] = e.value
	}
	matchedB, matchedH := make([]bool, len(gb)), make([]bool, len(gh))
	for _, p := range pairEdits(vb, vh) {
		c.Modified = append(c.Modified, Pair{gb[p[0]], gh[p[1]]})
		matchedB[p[0]], matchedH[p[1]] = true, true
	}
	for i, b := range gb {
		if !matchedB[i] {
			c.Deleted = append(c.Deleted, b)
		}
	}
	for k, h := range gh {
		if !matchedH[k] {
			c.Added = append(c.Added, h)
		}
	}
}

// pairEdits decides which entries of a gap between two aligned runs (old
// entries olds, new entries news, neither matched by identity) are edits
// of one another: first entries naming the same config-keys, then the same
// pr-link, then the same description; a gap of exactly one entry on each
// side is one edited entry. It returns (old index, new index) pairs.
func pairEdits(olds, news []*pyyaml.Value) [][2]int {
	same := func(field string) func(i, j int) bool {
		return func(i, j int) bool {
			x, ok1 := olds[i].Get(field)
			y, ok2 := news[j].Get(field)
			return ok1 && ok2 && pyyaml.Equal(x, y)
		}
	}
	return PairEditsFunc(len(olds), len(news), same(FieldConfigKeys),
		func(i, j int) bool { return prLinkOf(olds[i]) != "" && prLinkOf(olds[i]) == prLinkOf(news[j]) },
		same(FieldDescription))
}

// PairEditsFunc is pairEdits over n old and m new entries compared by the
// given predicates (same config-keys, same non-empty pr-link, same
// description).
func PairEditsFunc(n, m int, sameKeys, sameLink, sameDesc func(i, j int) bool) [][2]int {
	used := make([]bool, m)
	matched := make([]bool, n)
	rules := []func(i, j int) bool{sameKeys, sameLink, sameDesc,
		func(int, int) bool { return n == 1 && m == 1 }}
	var out [][2]int
	for _, rule := range rules {
		for i := 0; i < n; i++ {
			if matched[i] {
				continue
			}
			for k := 0; k < m; k++ {
				if !used[k] && rule(i, k) {
					used[k], matched[i] = true, true
					out = append(out, [2]int{i, k})
					break
				}
			}
		}
	}
	return out
}

// verifyFull is the recommended profile: the strict contract, made
// practical, plus perflog's rules. It runs in phases, each stopping the
// run when what follows cannot be judged: the file's bytes, its parse,
// the history it keeps (deleted, modified, reformatted entries), the new
// entries, and the change beyond the changelog (verifyDiffAware).
func verifyFull(in *Input) *Report {
	rep := &Report{}
	v := &fullRun{in: in, rep: rep, lk: newLinks(in.Repository)}
	v.add = func(f Finding) {
		f.File = in.Path
		if f.Severity == "" {
			f.Severity = Error
		}
		rep.Findings = append(rep.Findings, f)
	}
	if in.Head == nil {
		v.add(Finding{Rule: RuleMissingFile, Message: fmt.Sprintf("%s does not exist at %s", in.Path, in.HeadRev)})
		return rep
	}
	v.baseRaw = in.Base
	if v.baseRaw == nil {
		v.baseRaw = []byte{}
	}
	if bytes.Equal(v.baseRaw, in.Head) {
		v.add(Finding{Rule: RuleNoAdditions, Severity: Info, Message: fmt.Sprintf("%s is unchanged between %s and %s", in.Path, in.BaseRev, in.HeadRev)})
		if f, _, err := parseWithRoot(in.Path, in.Head); err == nil {
			rep.Head = f
		}
		verifyDiffAware(in, rep, nil, addAny(in, rep))
		return rep
	}
	if !v.checkBytes() || !v.parse() || in.canceled() {
		return rep
	}
	ch := Align(v.base, v.head)
	rep.Added = ch.Added
	corrections := v.checkHistory(ch)
	if corrections > 0 && len(ch.Added) > 0 {
		v.add(Finding{Rule: RuleMixedCorrection, Line: ch.Added[0].Line, Entry: ch.Added[0].Index,
			Message: fmt.Sprintf("this change corrects %d historical pr-link(s) and adds %d entr%s; do not mix them (the merge tooling canonicalizes only one kind)", corrections, len(ch.Added), plural(len(ch.Added), "y", "ies"))})
	}
	news := fresh(ch.Added, v.base, v.head)
	v.checkAdded(ch, news)
	if len(ch.Added) == 0 && corrections == 0 && len(ch.Deleted) == 0 && len(ch.Modified) == 0 && !HasErrors(rep.Findings) {
		v.add(Finding{Rule: RuleNoAdditions, Severity: Info, Message: "the change adds no entry (whitespace only)"})
	}
	if in.canceled() {
		return rep
	}
	verifyDiffAware(in, rep, news, addAny(in, rep))
	return rep
}

// fresh are the added entries that say something of this change: not
// history a cleanup moved or re-linked (#1161 reordered 85 entries), that
// is, not an entry the base holds as many times, word for word, as the
// head does. A re-run's copy of an older entry adds one more: it is
// fresh.
func fresh(added []*Entry, base, head *File) []*Entry {
	if base == nil || len(base.Entries) == 0 {
		return added
	}
	spare := map[string]int{} // identity → base copies not in head's kept entries
	for _, e := range base.Entries {
		spare[e.Identity()]++
	}
	isAdded := map[*Entry]bool{}
	for _, e := range added {
		isAdded[e] = true
	}
	for _, e := range head.Entries {
		if !isAdded[e] {
			spare[e.Identity()]--
		}
	}
	var out []*Entry
	for _, e := range added {
		if id := e.Identity(); spare[id] > 0 {
			spare[id]--
			continue
		}
		out = append(out, e)
	}
	return out
}

// fullRun is one run of the full profile, between its phases.
type fullRun struct {
	in      *Input
	rep     *Report
	lk      links
	add     func(Finding)
	baseRaw []byte // the base file ("" when there is none)
	// base and head are the parsed files (parse).
	base, head *File
}

// checkBytes applies the byte-level rules: errors on lines this change
// wrote, warnings on debris inherited from history. It reports whether
// the file can be parsed (it is UTF-8).
func (v *fullRun) checkBytes() bool {
	in, add := v.in, v.add
	added := addedLineSet(v.baseRaw, in.Head)
	if !bytes.HasSuffix(in.Head, []byte("\n")) {
		add(Finding{Rule: RuleFinalNewline, Line: countLines(in.Head), Message: fmt.Sprintf("%s at %s does not end with a newline", in.Path, in.HeadRev)})
	}
	byteRules := []struct {
		b    byte
		rule string
		what string
	}{{'\r', RuleCR, "a CR character"}, {'\t', RuleTab, "a tab"}, {0, RuleNUL, "a NUL byte"}}
	for _, br := range byteRules {
		line, inherited := firstByteLine(in.Head, br.b, added)
		switch {
		case line > 0 && !inherited:
			add(Finding{Rule: br.rule, Line: line, Message: fmt.Sprintf("line %d contains %s; the changelog must not contain CR, tab or NUL characters", line, br.what)})
		case line > 0:
			add(Finding{Rule: br.rule, Severity: Warning, Line: line, Message: fmt.Sprintf("line %d contains %s (present at %s already)", line, br.what, in.BaseRev)})
		}
	}
	if !utf8.Valid(in.Head) {
		add(Finding{Rule: RuleNotUTF8, Message: in.Path + " is not valid UTF-8"})
		return false
	}
	return true
}

// parse parses the head and the base (on the other core meanwhile) and
// checks the head's shape: a list of entries, each starting its line. It
// reports whether the entries can be judged.
func (v *fullRun) parse() bool {
	in, add := v.in, v.add
	type parsed struct {
		f    *File
		root *pyyaml.Value
		err  error
	}
	baseDone := make(chan parsed, 1)
	go func() {
		b, broot, err := parseWithRoot(in.Path, v.baseRaw)
		baseDone <- parsed{b, broot, err}
	}()
	head, root, err := parseWithRoot(in.Path, in.Head)
	if err != nil {
		add(atBreakingEntry(loadFailure(in.Path, err, in.Path+" at "+in.HeadRev, nil), in.Head))
		return false
	}
	v.rep.Head = head
	if root.Kind != pyyaml.Seq {
		if root.Kind == pyyaml.Null {
			add(Finding{Rule: RuleRootNotList, Message: in.Path + " holds no entries"})
		} else {
			add(Finding{Rule: RuleRootNotList, Line: root.Line, Message: fmt.Sprintf("%s root must be a YAML list of entries, got a %s", in.Path, root.Kind)})
		}
		return false
	}
	for _, e := range head.Entries {
		if !strings.HasPrefix(head.LineText(e.Line), "- config-keys:") {
			add(Finding{Rule: RuleEntryStart, Line: e.Line, Entry: e.Index, Source: head.LineText(e.Line),
				Message: fmt.Sprintf("entry %d must start with a \"- config-keys:\" line at column 0%s", e.Index, bomHint(head.LineText(e.Line)))})
		}
	}
	if n := countEntryStarts(string(in.Head)); n != len(head.Entries) {
		add(Finding{Rule: RuleEntryStart, Message: fmt.Sprintf("%s has %d lines starting \"- config-keys:\" but %d entries; a nested or mis-indented entry?", in.Path, n, len(head.Entries))})
	}
	base := &File{Path: in.Path, Raw: v.baseRaw, lineStarts: lineStarts(v.baseRaw)}
	if bp := <-baseDone; len(bytes.TrimSpace(v.baseRaw)) > 0 {
		b, broot, err := bp.f, bp.root, bp.err
		if err != nil || broot.Kind != pyyaml.Seq {
			// history that does not parse (it happened three times on
			// InferenceX): fall back to PyYAML's lenient loader
			if lv, err2 := pyyaml.Load(v.baseRaw, pyyaml.Options{}); err2 == nil && lv.Kind == pyyaml.Seq {
				b.Entries = b.split(lv.Items)
			} else {
				b.Entries = b.splitBlocks() // not even leniently: entry by entry
			}
			add(Finding{Rule: RuleYAML, Severity: Warning, Message: fmt.Sprintf("%s at %s does not load with unique keys (%v); history was compared leniently", in.Path, in.BaseRev, err)})
		}
		base = b
	}
	v.base, v.head = base, head
	return true
}

// checkHistory judges what the change did to the entries the base has:
// deleted, modified, reformatted, their pr-links corrected, gaps. It
// returns the number of pr-link corrections.
func (v *fullRun) checkHistory(ch *Change) (corrections int) {
	in, add, base, head := v.in, v.add, v.base, v.head
	for _, d := range ch.Deleted {
		add(Finding{Rule: RuleDeletedEntry, Line: nearestHeadLine(head, ch, d), Entry: 0,
			Message: fmt.Sprintf("entry %d of %s (line %d, config-keys %s) was deleted; the changelog is append-only", d.Index, in.BaseRev, d.Line, keysText(d))})
	}
	for _, m := range ch.Modified {
		add(Finding{Rule: RuleModifiedEntry, Line: m.Head.Line, Entry: m.Head.Index, Source: head.LineText(m.Head.Line),
			Message:  fmt.Sprintf("entry %d changed (%s); existing entries are immutable except for pr-link-only corrections", m.Head.Index, describeChange(m)),
			Evidence: changedLines(in.Path, base, head, m)})
	}
	for _, k := range ch.Kept {
		bRaw, hRaw := k.Base.Raw(base), k.Head.Raw(head)
		ol, nl := k.Base.PRLink(), k.Head.PRLink()
		if ol != nl {
			corrections++
			if !v.lk.canonical.MatchString(nl) {
				add(Finding{Rule: RulePRFormat, Line: k.Head.FieldLine(FieldPRLink), Entry: k.Head.Index, Source: head.LineText(k.Head.FieldLine(FieldPRLink)),
					Message: fmt.Sprintf("entry %d pr-link correction is not canonical: %s (want %s<N>)", k.Head.Index, pyQuote(nl), v.lk.prefix)})
			}
			// (a link moved to the repository's new name names the same PR:
			// not a correction of which PR)
			if n, isPR := v.lk.prNumber(nl); isPR && v.in.Introduced != nil && n != pullNumber(ol) {
				if pr, commit, ok := v.in.Introduced(k.Base.Index); ok && pr != n {
					add(Finding{Rule: RulePRWrongCorrection, Line: k.Head.FieldLine(FieldPRLink), Entry: k.Head.Index, Source: head.LineText(k.Head.FieldLine(FieldPRLink)),
						Message: fmt.Sprintf("entry %d pr-link is corrected to #%d, but the entry was introduced by #%d (%s); use %s",
							k.Head.Index, n, pr, shortCommit(commit), v.lk.forPR(pr))})
				}
			}
			if l, ok := changedOutsidePRLink(bRaw, hRaw); ok {
				add(Finding{Rule: RuleCorrectionLines, Line: k.Head.Line + l, Entry: k.Head.Index, Source: head.LineText(k.Head.Line + l),
					Message: fmt.Sprintf("entry %d: a pr-link correction may change only the \"  pr-link:\" line", k.Head.Index)})
			}
			continue
		}
		if !bytes.Equal(bRaw, hRaw) {
			l := bytes.Count(hRaw[:commonPrefixLen(bRaw, hRaw)], []byte("\n"))
			add(Finding{Rule: RuleReformatted, Line: k.Head.Line + l, Entry: k.Head.Index, Source: head.LineText(k.Head.Line + l),
				Message: fmt.Sprintf("entry %d was reformatted without a semantic change; historical bytes are immutable", k.Head.Index)})
		}
	}
	checkGaps(in, base, head, ch, add)
	return corrections
}

// checkAdded judges the new entries: where they stand (appended, one
// empty line before each, none after the last), their schema, their
// pr-links and config-keys; and warns of history's schema errors.
func (v *fullRun) checkAdded(ch *Change, news []*Entry) {
	in, add, head := v.in, v.add, v.head
	isAdded := map[*Entry]bool{}
	for _, e := range ch.Added {
		isAdded[e] = true
	}
	lastHistorical := 0
	// historicalAfter[i]: the entries after head.Entries[i] that the base has
	historicalAfter := make([]int, len(head.Entries)+1)
	for i := len(head.Entries) - 1; i >= 0; i-- {
		historicalAfter[i] = historicalAfter[i+1]
		if e := head.Entries[i]; !isAdded[e] {
			historicalAfter[i]++
			lastHistorical = max(lastHistorical, e.Index)
		}
	}
	for _, e := range ch.Added {
		if e.Index < lastHistorical {
			n := historicalAfter[e.Index]
			add(Finding{Rule: RuleNotAtEnd, Line: e.Line, Entry: e.Index, Source: head.LineText(e.Line),
				Message: fmt.Sprintf("new entry %d is inserted before %d existing entr%s; append it at the end of %s", e.Index, n, plural(n, "y", "ies"), in.Path)})
		}
		checkSeparator(in.Base, head, e, add)
		if next := e.Index; next < len(head.Entries) && !isAdded[head.Entries[next]] {
			// (an added one is checked as itself: said once)
			checkSeparator(in.Base, head, head.Entries[next], add)
		}
	}
	if len(ch.Added) > 0 && ch.Added[len(ch.Added)-1].Index == len(head.Entries) && bytes.HasSuffix(in.Head, []byte("\n\n")) {
		add(Finding{Rule: RuleTrailingBlank, Line: countLines(in.Head), Message: "the file must end right after the last entry, with one newline"})
	}
	var valid []*Fields
	var validLines []int
	var validValues []*pyyaml.Value
	var validIndex []int
	for _, e := range ch.Added {
		for _, se := range e.Errors {
			add(Finding{Rule: se.Rule, Line: se.Line, Entry: e.Index, Source: head.LineText(se.Line),
				Message: fmt.Sprintf("entry %d: %s", e.Index, se.Msg)})
		}
		if e.Fields != nil {
			valid = append(valid, e.Fields)
			validLines = append(validLines, e.Line)
			validValues = append(validValues, e.value)
			validIndex = append(validIndex, e.Index)
			if slices.Contains(news, e) { // a moved entry keeps its own PR's link
				checkLinkFull(in, v.lk, head, e, func(o *Entry) bool { return isAdded[o] }, add)
			}
			checkRepeatedKeys(head, e, add)
			checkPlaceholderBullets(head, e, add)
		}
	}
	for _, e := range head.Entries {
		if !isAdded[e] && len(e.Errors) > 0 {
			add(Finding{Rule: e.Errors[0].Rule, Severity: Warning, Line: e.Errors[0].Line, Entry: e.Index,
				Message: fmt.Sprintf("historical entry %d: %s", e.Index, e.Errors[0].Msg)})
		}
	}
	if len(valid) > 0 {
		gateModeAndKeys(in, valid, validLines, validValues, validIndex, nil, add, true)
	}
	unknownKeysOfInvalid(in, ch.Added, add)
}

// unknownKeysOfInvalid reports the unknown config-keys of new entries
// that fail the schema (a missing pr-link does not hide a misspelled key):
// the keys that are strings, each at its line, as for a valid entry.
func unknownKeysOfInvalid(in *Input, added []*Entry, add func(Finding)) {
	var m *config.Master
	for _, e := range added {
		if e.Fields != nil {
			continue
		}
		kas := configKeysOf(e.value)
		if len(kas) == 0 {
			continue
		}
		if m == nil {
			if m, _ = in.master(); m == nil {
				return // config/invalid is reported with the valid entries, if any
			}
		}
		for _, ka := range kas {
			if _, errs := m.Resolve([]string{ka.Key}); len(errs) > 0 {
				msg := errs[0].Error()
				if len(errs[0].Closest) > 0 {
					msg += " Did you mean " + quoteJoin(errs[0].Closest) + "?"
				}
				add(Finding{Rule: RuleUnknownKey, Severity: Error, Line: ka.Line, Entry: e.Index, ConfigKey: ka.Key, Message: msg})
			}
		}
	}
}

// checkRepeatedKeys warns about a config-key that entry e lists more than
// once (harmless to the sweep, but a copy-paste slip a reviewer asks about).
func checkRepeatedKeys(head *File, e *Entry, add func(Finding)) {
	v, ok := e.value.Get(FieldConfigKeys)
	if !ok {
		return
	}
	first := map[string]int{}
	for _, it := range v.Items {
		if it.Kind != pyyaml.Str {
			continue
		}
		if l, seen := first[it.Str]; seen {
			add(Finding{Rule: RuleRepeatedKey, Severity: Warning, Line: it.Line, Entry: e.Index, ConfigKey: it.Str, Source: head.LineText(it.Line),
				Message: fmt.Sprintf("entry %d lists config-key %s twice (first on line %d)", e.Index, pyQuote(it.Str), l)})
			continue
		}
		first[it.Str] = it.Line
	}
}

// placeholderWords are descriptions that say nothing: reviewers reject
// them, and no claim in them can be checked.
var placeholderWords = map[string]bool{"": true, "test": true, "testing": true, "tbd": true, "tbc": true, "xxx": true, "wip": true,
	"todo": true, "update": true, "updates": true, "updated": true, "fix": true, "fixes": true, "fixed": true, "change": true,
	"changes": true, "misc": true, "placeholder": true, "n/a": true, "na": true, "none": true, "-": true, "...": true}

// placeholderBullet says whether a bullet says nothing: a placeholder
// word, or one of the entry's config-keys alone (or after a bare verb:
// "update KEY").
func placeholderBullet(b string, keys []string) bool {
	t := strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(b), "\"'`")))
	t = strings.TrimRight(t, ".!:;, ")
	if placeholderWords[t] || strings.Trim(t, "-_.*#=~ ") == "" {
		return true
	}
	for _, verb := range []string{"", "update ", "fix ", "change ", "bump ", "tune "} {
		for _, k := range keys {
			if t == verb+strings.ToLower(k) {
				return true
			}
		}
	}
	return false
}

// checkPlaceholderBullets reports each bullet of a new entry that says
// nothing (description/placeholder).
func checkPlaceholderBullets(head *File, e *Entry, add func(Finding)) {
	v, ok := e.value.Get(FieldDescription)
	if !ok {
		return
	}
	keys := stringsOf(e.value, FieldConfigKeys)
	for _, it := range v.Items {
		if it.Kind != pyyaml.Str || !placeholderBullet(it.Str, keys) {
			continue
		}
		what := "says nothing a reviewer can check"
		if len(v.Items) == 1 {
			what = "is the whole description, and says nothing a reviewer can check"
		}
		add(Finding{Rule: RulePlaceholderDesc, Line: it.Line, Entry: e.Index, Source: head.LineText(it.Line),
			Message: fmt.Sprintf("entry %d's bullet %s %s: say what the change does (the flags, variables, image or search space it changes, and why)", e.Index, pyQuote(it.Str), what)})
	}
}

func checkLinkFull(in *Input, lk links, head *File, e *Entry, isAdded func(*Entry) bool, add func(Finding)) {
	link := e.PRLink()
	line := e.FieldLine(FieldPRLink)
	src := head.LineText(line)
	if lk.isPlaceholder(link) {
		if in.PR == 0 {
			add(Finding{Rule: RulePRPlaceholder, Line: line, Entry: e.Index, Source: src,
				Message: fmt.Sprintf("entry %d has the placeholder pr-link %s; outside a pull request the link must be %s<N>: on your PR's branch, pass --pr N (perflog changelog new --pr N writes the link)", e.Index, pyQuote(link), lk.prefix)})
		} else {
			add(Finding{Rule: RulePRPlaceholder, Severity: Info, Line: line, Entry: e.Index, Source: src,
				Message: fmt.Sprintf("entry %d uses the placeholder %s; it becomes %s when merged", e.Index, pyQuote(link), lk.forPR(in.PR))})
		}
		return
	}
	n, ok := lk.prNumber(link)
	if !ok {
		// a link into the repository's former name (GitHub redirects it)
		// names the same PR: canonical while the changelog has no link of
		// the current name (the state predates the rename), a format
		// warning with the fix after it; another PR's is a mismatch
		names := in.Settings.RepositoryNames()
		if pl := ParseLink(link); pl.PR > 0 && len(names) > 1 && pl.In(names[1:]...) {
			if in.PR != 0 && pl.PR != in.PR {
				add(Finding{Rule: RulePRMismatch, Line: line, Entry: e.Index, Source: src,
					Message: fmt.Sprintf("entry %d pr-link points at PR #%d (of %s, the repository's former name), but this is PR #%d: another PR; use %s", e.Index, pl.PR, pl.Repo, in.PR, lk.forPR(in.PR))})
				return
			}
			if bytes.Contains(head.Raw, []byte(lk.prefix)) {
				add(Finding{Rule: RulePRFormat, Severity: Warning, Line: line, Entry: e.Index, Source: src,
					Message: fmt.Sprintf("entry %d pr-link uses the repository's former name %s; use %s", e.Index, pl.Repo, lk.forPR(pl.PR))})
			}
			return
		}
		add(Finding{Rule: RulePRFormat, Line: line, Entry: e.Index, Source: src,
			Message: fmt.Sprintf("entry %d pr-link %s is not a canonical pull-request link (%s<N>)", e.Index, pyQuote(link), lk.prefix)})
		return
	}
	if in.PR != 0 && n != in.PR {
		// a re-trigger: a copy of an earlier entry, linking that entry's
		// PR, re-runs its sweep
		for _, o := range head.Entries {
			if o != e && o.Index < e.Index && o.PRLink() == link && repeats(e.value, o.value) {
				add(Finding{Rule: RulePRMismatch, Severity: Info, Line: line, Entry: e.Index, Source: src,
					Message: fmt.Sprintf("entry %d repeats entry %d (line %d) and links its PR #%d: a re-trigger of that sweep", e.Index, o.Index, o.Line, n)})
				return
			}
		}
		msg := fmt.Sprintf("entry %d pr-link points at PR #%d, but this is PR #%d; use %s", e.Index, n, in.PR, lk.forPR(in.PR))
		for _, o := range head.Entries {
			if o != e && o.PRLink() == link {
				msg += fmt.Sprintf(" (entry %d, line %d, has the same link: copied from it?)", o.Index, o.Line)
				break
			}
		}
		add(Finding{Rule: RulePRMismatch, Line: line, Entry: e.Index, Source: src, Message: msg})
		return
	}
	if in.PR == 0 {
		// no PR to compare with (a branch checked before its PR exists):
		// a link an existing entry has is most likely copied with it
		for _, o := range head.Entries {
			if o == e || o.Index > e.Index || o.PRLink() != link || isAdded(o) {
				continue
			}
			if repeats(e.value, o.value) {
				return // a re-trigger of o's sweep
			}
			add(Finding{Rule: RulePRCopied, Severity: Warning, Line: line, Entry: e.Index, Source: src,
				Message: fmt.Sprintf("entry %d pr-link %s is the link of entry %d (line %d): copied from it? on your PR's branch, pass --pr N", e.Index, pyQuote(link), o.Index, o.Line)})
			return
		}
	}
}

// repeats reports whether entry a repeats entry b: the same config-keys
// (in any order) and every bullet of b (a re-trigger may add a note of its own).
func repeats(a, b *pyyaml.Value) bool {
	ka, kb := slices.Sorted(slices.Values(stringsOf(a, FieldConfigKeys))), slices.Sorted(slices.Values(stringsOf(b, FieldConfigKeys)))
	if len(ka) == 0 || !slices.Equal(ka, kb) {
		return false
	}
	da := map[string]bool{}
	for _, d := range stringsOf(a, FieldDescription) {
		da[strings.TrimSpace(d)] = true
	}
	db := stringsOf(b, FieldDescription)
	if len(db) == 0 {
		return false
	}
	for _, d := range db {
		if !da[strings.TrimSpace(d)] {
			return false
		}
	}
	return true
}

// checkSeparator requires exactly one empty line before entry e (unless it
// is the first entry). An entry appended right after the base's bytes,
// which end with empty lines already, added none: more than one is the
// history's, which the change cannot remove without editing it (the
// incumbent accepts it too).
func checkSeparator(base []byte, head *File, e *Entry, add func(Finding)) {
	if e.Index == 1 {
		return
	}
	prefix := head.Raw[:e.Start]
	if bytes.HasSuffix(prefix, []byte("\n\n")) && !bytes.HasSuffix(prefix, []byte("\n\n\n")) {
		return
	}
	if len(base) > 0 && e.Start == len(base) && bytes.HasPrefix(head.Raw, base) && bytes.HasSuffix(base, []byte("\n\n")) {
		return
	}
	prev := head.Entries[e.Index-2]
	gap := head.Raw[prev.End:e.Start]
	what := "no empty line"
	switch {
	case bytes.Count(gap, []byte("\n")) > 1 && len(bytes.TrimSpace(gap)) == 0 && bytes.HasSuffix(prefix, []byte("\n\n\n")):
		what = fmt.Sprintf("%d empty lines", bytes.Count(gap, []byte("\n")))
	case len(gap) > 0:
		what = "a line holding only spaces"
	}
	add(Finding{Rule: RuleSeparator, Line: e.Line, Entry: e.Index, Source: head.LineText(e.Line),
		Message: fmt.Sprintf("entry %d must be preceded by exactly one empty line (found %s)", e.Index, what)})
}

// checkGaps compares the bytes between historical entries (and before the
// first one) with the base: whitespace between old entries is history too.
func checkGaps(in *Input, base, head *File, ch *Change, add func(Finding)) {
	if len(ch.Kept) == 0 {
		return
	}
	isAdded := map[*Entry]bool{}
	for _, e := range ch.Added {
		isAdded[e] = true
	}
	for _, m := range ch.Modified {
		isAdded[m.Head] = true
	}
	first := ch.Kept[0]
	if first.Base.Index == 1 && first.Head.Index == 1 && !bytes.Equal(base.Raw[:first.Base.Start], head.Raw[:first.Head.Start]) {
		add(Finding{Rule: RuleHistoryBytes, Line: 1, Message: "the bytes before the first entry changed; historical bytes are immutable"})
	}
	for k := 0; k+1 < len(ch.Kept); k++ {
		a, b := ch.Kept[k], ch.Kept[k+1]
		if b.Base.Index != a.Base.Index+1 || b.Head.Index != a.Head.Index+1 {
			continue // entries were inserted or removed in between
		}
		bg, hg := base.Raw[a.Base.End:b.Base.Start], head.Raw[a.Head.End:b.Head.Start]
		if !bytes.Equal(bg, hg) {
			add(Finding{Rule: RuleHistoryBytes, Line: head.LineOf(a.Head.End), Entry: b.Head.Index,
				Message: fmt.Sprintf("the separator between historical entries %d and %d changed (%q → %q); historical whitespace is immutable", a.Head.Index, b.Head.Index, string(bg), string(hg))})
		}
	}
	last := ch.Kept[len(ch.Kept)-1]
	if last.Base.Index == len(base.Entries) {
		tail := base.Raw[last.Base.End:]
		rest := head.Raw[last.Head.End:]
		if last.Head.Index == len(head.Entries) {
			if !bytes.Equal(tail, rest) {
				add(Finding{Rule: RuleHistoryBytes, Line: head.LineOf(last.Head.End - 1), Entry: last.Head.Index,
					Message: fmt.Sprintf("the bytes after the last entry changed (%q → %q)", string(tail), string(rest))})
			}
		} else if !bytes.HasPrefix(rest, tail) {
			add(Finding{Rule: RuleHistoryBytes, Line: head.LineOf(last.Head.End - 1), Entry: last.Head.Index,
				Message: fmt.Sprintf("the bytes after historical entry %d changed (%q at %s); append after them without editing", last.Head.Index, string(tail), in.BaseRev)})
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func keysText(e *Entry) string {
	var ks []string
	for _, k := range e.ConfigKeyLines() {
		ks = append(ks, k.Key)
	}
	return "[" + strings.Join(ks, ", ") + "]"
}

func describeChange(p Pair) string {
	var what []string
	b, h := p.Base.value, p.Head.value
	seen := map[string]bool{}
	for _, v := range []*pyyaml.Value{b, h} {
		if v == nil || v.Kind != pyyaml.Map {
			continue
		}
		for _, kv := range v.Pairs {
			if kv.Key.Kind != pyyaml.Str || seen[kv.Key.Str] || kv.Key.Str == FieldPRLink {
				continue
			}
			seen[kv.Key.Str] = true
			x, ok1 := b.Get(kv.Key.Str)
			y, ok2 := h.Get(kv.Key.Str)
			if ok1 != ok2 || (ok1 && !pyyaml.Equal(x, y)) {
				what = append(what, kv.Key.Str)
			}
		}
	}
	if len(what) == 0 {
		return "content"
	}
	verb := " differ"
	if len(what) == 1 {
		verb = " differs"
	}
	return strings.Join(what, ", ") + verb + fmt.Sprintf(" from line %d at base", p.Base.Line)
}

// maxChangedLines bounds the lines a modified entry's finding shows.
const maxChangedLines = 12

// changedLines are the lines of a modified entry that differ, as git's
// diff of the entry has them: each line of the base that went (rev
// "base") and of the head that came (rev "head"), at most
// maxChangedLines.
func changedLines(path string, base, head *File, m Pair) []Evidence {
	d := xdiff.Diff(m.Base.Raw(base), m.Head.Raw(head))
	var out []Evidence
	for i, gone := range d.Old {
		if gone && len(out) < maxChangedLines {
			out = append(out, Evidence{File: path, Line: m.Base.Line + i, Text: strings.TrimRight(string(d.OldLines[i]), "\n"), Rev: "base"})
		}
	}
	for j, came := range d.New {
		if came && len(out) < maxChangedLines {
			out = append(out, Evidence{File: path, Line: m.Head.Line + j, Text: strings.TrimRight(string(d.NewLines[j]), "\n"), Rev: "head"})
		}
	}
	return out
}

func nearestHeadLine(head *File, ch *Change, d *Entry) int {
	// the head line of the kept entry that followed d at base
	for _, k := range ch.Kept {
		if k.Base.Index > d.Index {
			return k.Head.Line
		}
	}
	return head.NumLines()
}

// changedOutsidePRLink reports the first line (0-based within the entry)
// that differs between two versions of an entry and is not a pr-link line.
func changedOutsidePRLink(a, b []byte) (int, bool) {
	al, bl := splitKeepEnds(a), splitKeepEnds(b)
	if len(al) != len(bl) {
		return 0, true
	}
	p := []byte("  pr-link:")
	for i := range al {
		if !bytes.Equal(al[i], bl[i]) && !(bytes.HasPrefix(al[i], p) && bytes.HasPrefix(bl[i], p)) {
			return i, true
		}
	}
	return 0, false
}

// addedLineSet returns the 1-based head lines the diff base→head adds.
func addedLineSet(base, head []byte) map[int]bool {
	r := xdiff.Diff(base, head)
	out := map[int]bool{}
	for _, j := range r.AddedIndex() {
		out[j+1] = true
	}
	return out
}

// firstByteLine returns the first line holding b, preferring one this
// change added; inherited is true when only history holds it.
func firstByteLine(raw []byte, b byte, added map[int]bool) (line int, inherited bool) {
	first := 0
	l := 1
	for _, c := range raw {
		if c == b {
			if added[l] {
				return l, false
			}
			if first == 0 {
				first = l
			}
		}
		if c == '\n' {
			l++
		}
	}
	return first, first > 0
}

// addAny adds a finding that may concern a file other than the changelog
// (a script, a master config); File defaults to the changelog.
func addAny(in *Input, rep *Report) func(Finding) {
	return func(f Finding) {
		if f.File == "" {
			f.File = in.Path
		}
		if f.Severity == "" {
			f.Severity = Error
		}
		rep.Findings = append(rep.Findings, f)
	}
}

// shortCommit is a commit id as messages show it (10 hex digits).
func shortCommit(c string) string { return c[:min(len(c), 10)] }

// pullNumber is the number a link to a pull request ends with, under any
// repository name (0: none).
func pullNumber(link string) int {
	_, num, ok := strings.Cut(link, "/pull/")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil {
		return 0
	}
	return n
}
