package provenance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
)

// Verdict judges an entry's pr-link against the history. The values are a
// public contract (JSON, the index): add, never rename.
type Verdict string

// Verdicts.
const (
	// VerdictOK: the link names the PR that introduced the entry.
	VerdictOK Verdict = "ok"
	// VerdictCorrected: as ok, after a later pr-link-only change fixed it.
	VerdictCorrected Verdict = "corrected"
	// VerdictRelanded: the entry was re-added (a re-land after a revert)
	// and links the PR of the earlier, identical entry.
	VerdictRelanded Verdict = "relanded"
	// VerdictEdited: the content was later edited in place by another
	// PR; the link names the PR that introduced the entry before that.
	VerdictEdited Verdict = "edited"
	// VerdictBackfilled: the entry was written by the commit that created
	// the changelog and links an earlier PR (history backfilled then).
	VerdictBackfilled Verdict = "backfilled"
	// VerdictPlaceholder: no pull-request link (XXX, TBD, empty).
	VerdictPlaceholder Verdict = "placeholder"
	// VerdictNoPR: the introducing commit names no PR, so the link cannot
	// be checked (perflog does not guess).
	VerdictNoPR Verdict = "no-pr"
	// VerdictMismatch: the link points at another PR.
	VerdictMismatch Verdict = "mismatch"
	// VerdictRetrigger: the entry repeats an earlier entry and links its
	// PR, to re-run that sweep ("re-trigger", "re-append").
	VerdictRetrigger Verdict = "retrigger"
)

// Verdicts lists the verdicts in documentation order.
var Verdicts = []Verdict{VerdictOK, VerdictCorrected, VerdictRelanded, VerdictEdited, VerdictBackfilled, VerdictPlaceholder, VerdictNoPR, VerdictMismatch, VerdictRetrigger}

// Meaning says what the verdict means, in a phrase.
func (v Verdict) Meaning() string {
	switch v {
	case VerdictOK:
		return "the pr-link names the PR that introduced the entry"
	case VerdictCorrected:
		return "ok, after a later pr-link-only change fixed the link"
	case VerdictRelanded:
		return "re-added after a revert; links the PR of the earlier entry"
	case VerdictEdited:
		return "edited in place later; links the PR that wrote it before"
	case VerdictBackfilled:
		return "links a PR that predates the changelog"
	case VerdictPlaceholder:
		return "no pull-request link (XXX, TBD, empty)"
	case VerdictNoPR:
		return "the introducing commit names no PR: the link cannot be checked"
	case VerdictMismatch:
		return "the link points at another PR (e.g. copied from another entry)"
	case VerdictRetrigger:
		return "repeats an earlier entry and links its PR: a re-run of that sweep"
	}
	return ""
}

// CommitRef names a commit in output.
type CommitRef struct {
	Commit  string    `json:"commit"`
	PR      *int      `json:"pr"`
	Date    time.Time `json:"date"`
	Subject string    `json:"subject"`
	// Ignored is set when the commit is in the ignore-revs list.
	Ignored bool `json:"ignored,omitempty"`
}

// AuditEvent is one event of an audited entry.
type AuditEvent struct {
	Type EventKind `json:"type"`
	CommitRef
	// From and To are the pr-links around a pr-link change.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Note qualifies the event (e.g. the file did not load at it).
	Note string `json:"note,omitempty"`
	// Kind is Type under the name provenance log uses (JSON only; see
	// AuditEntry.Named).
	Kind EventKind `json:"kind,omitempty"`
}

// AuditEntry is one audited changelog entry. JSON field names are a public
// contract: add, never rename.
type AuditEntry struct {
	Index int `json:"index"`
	// Entry is Index under the name verify's findings use (JSON only; see
	// Named).
	Entry      int          `json:"entry,omitempty"`
	Line       int          `json:"line"`
	ConfigKeys []string     `json:"config_keys"`
	PRLink     string       `json:"pr_link"`
	PRLinkPR   *int         `json:"pr_link_pr"`
	Introduced *CommitRef   `json:"introduced"`
	Events     []AuditEvent `json:"events"`
	Verdict    Verdict      `json:"verdict"`
	// Reason explains a verdict other than ok in a sentence.
	Reason string `json:"reason,omitempty"`
	// Claims are the entry's description claims checked against the
	// commit that introduced it (audit --claims).
	Claims []claims.Result `json:"claims,omitempty"`
}

// AuditReport is the outcome of Audit.
type AuditReport struct {
	Rev  plumbing.Hash
	Path string
	// Version is the blob of the changelog version the entries are of: the
	// file at Rev, or the newest older version that loads when it does not
	// (see Notes); zero when there is none. AuditText reads it.
	Version plumbing.Hash
	Entries []AuditEntry
	Summary map[Verdict]int
	Notes   []Note
}

// AuditOptions configures Audit.
type AuditOptions struct {
	// Rev is the commit whose changelog is audited; zero means Head.
	Rev plumbing.Hash
	// Key keeps only entries whose config-keys match this glob ('*').
	Key string
}

// Ref returns the output form of the commit at seq.
func (h *History) Ref(seq int) (*CommitRef, error) {
	ci, err := h.CommitAt(seq)
	if err != nil {
		return nil, err
	}
	r := &CommitRef{Commit: ci.Hash.String(), Date: ci.Date, Subject: ci.Subject, Ignored: h.ignore[seq]}
	if ci.PR > 0 {
		pr := ci.PR
		r.PR = &pr
	}
	return r, nil
}

// prAt returns the PR of the commit at seq (0 when none).
func (h *History) prAt(seq int) (int, error) {
	ci, err := h.CommitAt(seq)
	if err != nil {
		return 0, err
	}
	return ci.PR, nil
}

// Audit attributes every entry of the changelog at a revision to the
// first-parent commit and PR that introduced its content and judges its
// pr-link (see Verdict).
func (h *History) Audit(o AuditOptions) (*AuditReport, error) {
	rev := o.Rev
	if rev.IsZero() {
		rev = h.Head
	}
	seq, ok := h.seq[rev]
	if !ok {
		return nil, fmt.Errorf("%s: %w of %s", short(rev), ErrNotOnChain, short(h.Head))
	}
	repos := h.settings.RepositoryNames()
	rep := &AuditReport{Rev: rev, Path: h.ChangelogPath, Summary: map[Verdict]int{}}
	for _, n := range h.Notes {
		if n.Seq <= seq && n.Path == h.ChangelogPath {
			rep.Notes = append(rep.Notes, n)
		}
	}
	var re func(string) bool
	if o.Key != "" {
		re = keyFilter(o.Key)
	}
	entries, at := h.entriesAt(seq)
	if at != nil {
		rep.Version = at.Blob
	}
	for _, e := range entries {
		if re != nil && !anyOf(e.Keys(), re) {
			continue
		}
		ae, err := h.auditEntry(e, seq, repos)
		if err != nil {
			return nil, err
		}
		rep.Summary[ae.Verdict]++
		rep.Entries = append(rep.Entries, *ae)
	}
	return rep, nil
}

// FilterAudit keeps the entries whose config-keys match a glob (see
// AuditOptions.Key), with the summary recounted.
func FilterAudit(rep *AuditReport, glob string) *AuditReport {
	if glob == "" {
		return rep
	}
	match := keyFilter(glob)
	out := &AuditReport{Rev: rep.Rev, Path: rep.Path, Version: rep.Version, Notes: rep.Notes, Summary: map[Verdict]int{}}
	for _, e := range rep.Entries {
		if anyOf(e.ConfigKeys, match) {
			out.Entries = append(out.Entries, e)
			out.Summary[e.Verdict]++
		}
	}
	return out
}

// keyFilter matches a config-key against an audit --key glob: the glob
// matches the key, or the key (itself a glob) matches the glob's text.
func keyFilter(glob string) func(string) bool {
	g := config.GlobRegexp(glob)
	return func(k string) bool {
		return g.MatchString(k) || (strings.Contains(k, "*") && globMatch(k, glob))
	}
}

func anyOf(ss []string, f func(string) bool) bool {
	for _, s := range ss {
		if f(s) {
			return true
		}
	}
	return false
}

func (h *History) auditEntry(e *EntryAt, seq int, repos []string) (*AuditEntry, error) {
	ae := &AuditEntry{Index: e.Index, Line: e.Line, ConfigKeys: e.Keys(), PRLink: e.PRLink(), Events: []AuditEvent{}}
	if ae.ConfigKeys == nil {
		ae.ConfigKeys = []string{}
	}
	link := changelog.ParseLink(e.PRLink())
	if link.PR > 0 && link.In(repos...) {
		n := link.PR
		ae.PRLinkPR = &n
	}
	if e.Lin == nil {
		// cannot happen for a history built from this changelog
		ae.Verdict, ae.Reason = VerdictNoPR, "no history for this entry"
		return ae, nil
	}
	for _, ev := range e.Lin.Events {
		if ev.Seq > seq {
			break
		}
		ref, err := h.Ref(ev.Seq)
		if err != nil {
			return nil, err
		}
		ae.Events = append(ae.Events, AuditEvent{Type: ev.Kind, CommitRef: *ref, From: ev.From, To: linkTo(ev), Note: eventNote(ev)})
	}
	intro, ok := h.Introduction(e.Lin, seq)
	if !ok {
		ae.Verdict, ae.Reason = VerdictNoPR, "no introducing commit"
		return ae, nil
	}
	ref, err := h.Ref(intro.Seq)
	if err != nil {
		return nil, err
	}
	ae.Introduced = ref
	ae.Verdict, ae.Reason, err = h.verdict(e, intro, link, repos, seq)
	return ae, err
}

func eventNote(ev Event) string {
	if ev.Unloadable {
		return "the changelog did not load at this commit; the entry is in its text and in the next version that loads"
	}
	return ""
}

func linkTo(ev Event) string {
	if ev.Kind == EvPRLink {
		return ev.PRLink
	}
	return ""
}

func (h *History) verdict(e *EntryAt, intro Event, link changelog.Link, repos []string, seq int) (Verdict, string, error) {
	introPR, err := h.prAt(intro.Seq)
	if err != nil {
		return "", "", err
	}
	switch {
	case link.PR == 0:
		return VerdictPlaceholder, fmt.Sprintf("pr-link %q is not a pull-request link", e.PRLink()), nil
	case !link.In(repos...):
		return VerdictMismatch, fmt.Sprintf("pr-link points into %s, not %s", link.Repo, repos[0]), nil
	case introPR == 0:
		return VerdictNoPR, fmt.Sprintf("introduced by %s, whose subject names no PR", short(h.Chain[intro.Seq])), nil
	case link.PR == introPR:
		for _, ev := range e.Lin.Events {
			if ev.Seq > intro.Seq && ev.Seq <= seq && ev.Kind == EvPRLink {
				if from := changelog.ParseLink(ev.From); from.PR != introPR || !from.In(repos...) {
					return VerdictCorrected, fmt.Sprintf("pr-link corrected by %s", h.describe(ev.Seq)), nil
				}
			}
		}
		return VerdictOK, "", nil
	}
	// earlier incarnations of the entry: a re-land links the first landing,
	// an edited entry the PR that wrote it before the edit
	for _, ev := range e.Lin.Events {
		if ev.Seq >= intro.Seq {
			break
		}
		pr, err := h.prAt(ev.Seq)
		if err != nil {
			return "", "", err
		}
		if pr != link.PR {
			continue
		}
		switch {
		case intro.Kind == EvReadded && (ev.Kind == EvIntroduced || ev.Kind == EvReadded):
			return VerdictRelanded, fmt.Sprintf("re-added by %s; links #%d, which added it first", h.describe(intro.Seq), pr), nil
		case ev.Kind == EvIntroduced || ev.Kind == EvEdited || ev.Kind == EvReadded:
			return VerdictEdited, fmt.Sprintf("edited by %s; links #%d, which wrote it before", h.describe(intro.Seq), pr), nil
		}
	}
	// a re-land whose text changed: the linked PR's entry for the same
	// config-keys had been removed (reverted) before this one came
	for _, l := range h.lineagesFirstNaming(e.Keys()) {
		if l == e.Lin || l.Events[0].Seq >= intro.Seq || l.AliveAt(intro.Seq) {
			continue
		}
		if pr, err := h.prAt(l.Events[0].Seq); err != nil {
			return "", "", err
		} else if pr == link.PR {
			last, _ := l.Last(intro.Seq)
			return VerdictRelanded, fmt.Sprintf("re-lands the entry #%d added (removed by %s) with new text", pr, h.describe(last.Seq)), nil
		}
	}
	// history backfilled: the linked PR landed before the changelog existed
	if created := h.ChangelogCreated(); created >= 0 {
		landed, found := h.landedSeq(link.PR)
		createdPR, err := h.prAt(created)
		if err != nil {
			return "", "", err
		}
		if (found && landed < created) || (!found && createdPR > 0 && link.PR < createdPR) {
			return VerdictBackfilled, fmt.Sprintf("links #%d, which predates the changelog (created by %s)", link.PR, h.describe(created)), nil
		}
	}
	// a re-trigger: a copy of an earlier entry that links its PR
	for _, l := range h.lineagesFirstNaming(e.Keys()) {
		first := l.Events[0]
		if l == e.Lin || first.Seq >= intro.Seq || !repeats(e, first) {
			continue
		}
		if pr, err := h.prAt(first.Seq); err != nil {
			return "", "", err
		} else if pr == link.PR {
			return VerdictRetrigger, fmt.Sprintf("repeats the entry #%d added, to re-run its sweep (introduced by %s)", pr, h.describe(intro.Seq)), nil
		}
	}
	why := fmt.Sprintf("pr-link points at #%d, but the entry was introduced by %s", link.PR, h.describe(intro.Seq))
	if other := h.introducedBy(link.PR, seq); other != "" {
		why += "; #" + fmt.Sprint(link.PR) + " introduced " + other
	}
	return VerdictMismatch, why, nil
}

// repeats reports whether an entry repeats an earlier one (see
// the changelog's own check of a repeated entry): the same config-keys
// and every bullet of it.
func repeats(e *EntryAt, first Event) bool {
	if keySet(e.Keys()) != keySet(first.Keys) || len(first.Description) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, d := range e.Description() {
		have[strings.TrimSpace(d)] = true
	}
	for _, d := range first.Description {
		if !have[strings.TrimSpace(d)] {
			return false
		}
	}
	return true
}

// landedSeq finds the first-parent commit whose subject names pr.
func (h *History) landedSeq(pr int) (int, bool) {
	h.prOnce.Do(func() {
		h.prSeq = map[int]int{}
		for sq := range h.Chain {
			if ci, err := h.CommitAt(sq); err == nil && ci.PR > 0 {
				if _, dup := h.prSeq[ci.PR]; !dup {
					h.prSeq[ci.PR] = sq
				}
			}
		}
	})
	sq, ok := h.prSeq[pr]
	return sq, ok
}

// ChangelogCreated returns the seq of the first version of the changelog
// that loads (-1 when there is none): before it, no recipe change could
// have an entry.
func (h *History) ChangelogCreated() int {
	if h.cl == nil {
		return -1
	}
	for _, v := range h.cl.vers {
		if !v.Blob.IsZero() && v.Err == "" {
			return v.Seq
		}
	}
	return -1
}

// lineagesFirstNaming lists, in lineage order, the lineages whose first
// event names the same config-keys as keys (the same multiset, in any
// order). Indexed once: each mismatched entry looks its candidates up,
// where scanning every lineage made an audit quadratic in the entries.
func (h *History) lineagesFirstNaming(keys []string) []*Lineage {
	h.byKeysOnce.Do(func() {
		h.byKeys = map[string][]*Lineage{}
		for _, l := range h.Lineages {
			if len(l.Events) > 0 {
				k := keySet(l.Events[0].Keys)
				h.byKeys[k] = append(h.byKeys[k], l)
			}
		}
	})
	return h.byKeys[keySet(keys)]
}

// keySet is a multiset of keys as a string: sorted, each key after its
// length (so that no two multisets give one string).
func keySet(keys []string) string {
	s := slices.Clone(keys)
	slices.Sort(s)
	var b strings.Builder
	for _, k := range s {
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
	}
	return b.String()
}

// describe names the commit at seq: "#123 (abc1234567)".
func (h *History) describe(seq int) string {
	ci, err := h.CommitAt(seq)
	if err != nil || ci.PR == 0 {
		return short(h.Chain[seq])
	}
	return fmt.Sprintf("#%d (%s)", ci.PR, short(h.Chain[seq]))
}

// introducedBy names what PR pr introduced in the changelog, if anything:
// where a copied link comes from.
func (h *History) introducedBy(pr, seq int) string {
	// indexed once: a history ten times the corpus has 80 mismatched
	// entries and 8000 lineages to look through for each
	h.introducedOnce.Do(func() {
		h.introducedPR = map[int][]Event{}
		for _, l := range h.Lineages {
			for _, ev := range l.Events {
				if ev.Kind != EvIntroduced {
					continue
				}
				if p, err := h.prAt(ev.Seq); err == nil {
					h.introducedPR[p] = append(h.introducedPR[p], ev)
				}
			}
		}
	})
	for _, ev := range h.introducedPR[pr] {
		if ev.Seq <= seq {
			return "the entry for " + strings.Join(ev.Keys, ", ")
		}
	}
	return ""
}

func short(h plumbing.Hash) string { return h.String()[:10] }

// Named fills the fields that repeat others under the names the other
// commands use (entry for index, kind for type), for JSON readers that
// join documents; JSON field names are added, never renamed.
func (e *AuditEntry) Named() {
	e.Entry = e.Index
	for i := range e.Events {
		e.Events[i].Kind = e.Events[i].Type
	}
}
