package changelog

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// Merging perf-changelog.yaml. The file is append-only, so two branches
// that each appended entries never really conflict: the result is the
// upstream side's file byte for byte (what is already on the base
// branch), then the other side's new entries in their order, one empty
// line between entries and one newline at the end. This is what the
// incumbent's prepare_perf_changelog_merge.py resolve-conflict does for
// its bot, and what a git merge driver needs.

// MergeOptions say how the two sides of a merge are read.
type MergeOptions struct {
	// Repository is the GitHub repository canonical links point to.
	Repository string
	// PR, when not 0, is the pull request the contributing side is:
	// its contribution is held to the incumbent's contract (a history
	// edit other than a pr-link correction, a correction mixed with new
	// entries, a new entry linked to another PR, bytes of history changed
	// are refused, and so is a contribution left empty), and its new
	// entries' links are set to the PR's canonical link.
	PR int
}

// MergeResult is a merge's outcome.
type MergeResult struct {
	// Bytes are the merged file.
	Bytes []byte
	// Appended are the contributing side's new entries added after the
	// upstream ones (1-based positions in the contributing file).
	Appended []int
	// Kept are its new entries the upstream side already has (the same
	// entry, pr-link aside): not added again.
	Kept []int
	// Corrected are the entries (1-based, in the upstream file) whose
	// pr-link the contributing side corrected, applied.
	Corrected []int
	// Relinked are the appended entries whose pr-link was set to the PR's.
	Relinked []int
	// UpstreamDropped are the common ancestor's entries (1-based) the
	// upstream side deleted or rewrote: kept as it has them (the
	// mainline's history), and said.
	UpstreamDropped []int
}

// MergeConflict is a merge perflog leaves to a person: the sides cannot
// be combined without choosing between them.
type MergeConflict struct{ Reason string }

func (c *MergeConflict) Error() string { return "cannot merge perf-changelog.yaml: " + c.Reason }

func conflictf(format string, a ...any) error {
	return &MergeConflict{Reason: fmt.Sprintf(format, a...)}
}

// mergeSide is one side of a merge, parsed.
type mergeSide struct {
	name string
	f    *File
}

func parseSide(name string, raw []byte) (*mergeSide, error) {
	s := &mergeSide{name: name}
	f, root, err := parseWithRoot("perf-changelog.yaml", raw)
	if err != nil {
		return nil, conflictf("the %s side does not parse as YAML: %v", name, err)
	}
	if root.Kind != pyyaml.Seq && root.Kind != pyyaml.Null {
		return nil, conflictf("the %s side is not a YAML list", name)
	}
	if n := countEntryStarts(string(raw)); n != len(f.Entries) {
		return nil, conflictf("the %s side has %d entries but %d lines that start one with \"- config-keys:\"", name, len(f.Entries), n)
	}
	s.f = f
	return s, nil
}

// rawFault is what the incumbent's contract refuses in a side's bytes as
// a whole ("" when nothing; an empty side is a file that did not exist).
func rawFault(raw []byte) string {
	switch {
	case len(raw) == 0:
		return ""
	case raw[len(raw)-1] != '\n':
		return "does not end with a newline"
	case bytes.IndexByte(raw, '\r') >= 0:
		return "contains CR characters"
	case bytes.IndexByte(raw, '\t') >= 0:
		return "contains tabs"
	case bytes.IndexByte(raw, 0) >= 0:
		return "contains NUL bytes"
	}
	return ""
}

// blank reports whether a file holds only line breaks and spaces.
func blank(raw []byte) bool { return len(bytes.Trim(raw, " \r\n")) == 0 }

// sameEntry reports whether two entries are the same, pr-link included.
func sameEntry(a, b *Entry) bool {
	return a.Identity() == b.Identity() && a.PRLink() == b.PRLink()
}

// Merge merges a changelog's two sides, upstream and contrib, from their
// common ancestor base (each given as bytes; an empty base is a file that
// did not exist). The result keeps upstream byte for byte and appends
// contrib's new entries; a pr-link correction contrib made to an entry
// upstream left as it was is applied. Upstream's own edits and deletions
// are the mainline's, kept. Anything else, a history edit or a deletion
// on the contributing side, a correction of an entry upstream changed, a
// side that does not parse, is a *MergeConflict.
func Merge(base, upstream, contrib []byte, o MergeOptions) (*MergeResult, error) {
	if o.PR > 0 {
		// the incumbent's contract reads each side whole first
		for _, s := range []struct {
			name string
			raw  []byte
		}{{"base", base}, {"upstream", upstream}, {"contributing", contrib}} {
			if why := rawFault(s.raw); why != "" {
				return nil, conflictf("the %s side %s", s.name, why)
			}
		}
	}
	b, err := parseSide("base", base)
	if err != nil {
		return nil, err
	}
	u, err := parseSide("upstream", upstream)
	if err != nil {
		return nil, err
	}
	c, err := parseSide("contributing", contrib)
	if err != nil {
		return nil, err
	}
	lk := newLinks(o.Repository)
	nb := len(b.f.Entries)
	// (upstream's file is kept as it is, its own deletions too: they are
	// the mainline's)
	if len(c.f.Entries) < nb {
		return nil, conflictf("the %s side has %d entries where the common ancestor has %d: an entry was deleted", c.name, len(c.f.Entries), nb)
	}
	// what the contributing side did to history
	type fix struct {
		at   int // index in base
		link string
	}
	var fixes []fix
	inContrib := map[string]bool{}
	for _, e := range c.f.Entries {
		inContrib[e.Identity()] = true
	}
	var gone []string // what the contributing side deleted or rewrote
	for i, be := range b.f.Entries {
		if !inContrib[be.Identity()] {
			gone = append(gone, fmt.Sprintf("entry %d (%s, line %d of the common ancestor)", i+1, entryName(be), be.Line))
		}
	}
	switch {
	case len(gone) == 1:
		return nil, conflictf("the contributing side deleted or rewrote %s, which the changelog's history keeps as it was", gone[0])
	case len(gone) > 1:
		n, more := len(gone), ""
		if n > 5 {
			gone, more = gone[:5], fmt.Sprintf(" and %d more", n-5)
		}
		return nil, conflictf("the contributing side deleted or rewrote %d entries, which the changelog's history keeps as they were: %s%s", n, strings.Join(gone, "; "), more)
	}
	for i, be := range b.f.Entries {
		ce := c.f.Entries[i]
		switch {
		case sameEntry(be, ce):
			continue
		case be.Identity() != ce.Identity():
			return nil, conflictf("the contributing side moved entry %d (%s); the changelog's history is append-only", i+1, entryName(be))
		}
		if o.PR > 0 && !lk.canonical.MatchString(ce.PRLink()) {
			return nil, conflictf("entry %d pr-link correction is not canonical: %s", i+1, pyQuote(ce.PRLink()))
		}
		fixes = append(fixes, fix{i, ce.PRLink()})
	}
	added := c.f.Entries[nb:]
	if o.PR > 0 && len(fixes) == 0 && len(added) == 0 {
		return nil, conflictf("the PR has no appended entry or pr-link correction to preserve")
	}
	if o.PR > 0 {
		if len(fixes) > 0 && len(added) > 0 {
			return nil, conflictf("do not mix historical pr-link corrections with new changelog entries")
		}
		for _, e := range added {
			if l := e.PRLink(); !lk.isPlaceholder(l) && l != lk.forPR(o.PR) {
				return nil, conflictf("new entry %d (%s) must use %s or an XXX placeholder; found %s", e.Index, entryName(e), pyQuote(lk.forPR(o.PR)), pyQuote(l))
			}
		}
		if f, bad := rawChange(base, contrib, len(added), len(fixes), c.f); bad {
			return nil, conflictf("the contributing side: %s", f.Message)
		}
	}
	res := &MergeResult{}
	inUpstream := map[string]bool{}
	for _, e := range u.f.Entries {
		inUpstream[e.Identity()] = true
	}
	for i, be := range b.f.Entries {
		if !inUpstream[be.Identity()] {
			res.UpstreamDropped = append(res.UpstreamDropped, i+1)
		}
	}
	out := append([]byte(nil), upstream...)
	// corrections, on upstream's bytes, last first (offsets stay valid)
	for k := len(fixes) - 1; k >= 0; k-- {
		fx := fixes[k]
		be := b.f.Entries[fx.at]
		if fx.at >= len(u.f.Entries) {
			return nil, conflictf("the upstream side no longer has entry %d (%s), whose pr-link the contributing side corrected; resolve it by hand", fx.at+1, entryName(be))
		}
		ue := u.f.Entries[fx.at]
		switch {
		case ue.Identity() != be.Identity():
			return nil, conflictf("the upstream side changed entry %d (%s), whose pr-link the contributing side corrected; resolve it by hand", fx.at+1, entryName(ue))
		case ue.PRLink() == fx.link:
			continue // upstream made the same correction
		case ue.PRLink() != be.PRLink():
			return nil, conflictf("the two sides set entry %d's pr-link differently (%s, %s)", fx.at+1, pyQuote(ue.PRLink()), pyQuote(fx.link))
		}
		block, err := replacePRLink(out[ue.Start:ue.End], fx.link)
		if err != nil {
			return nil, conflictf("entry %d: %v", fx.at+1, err)
		}
		out = append(out[:ue.Start:ue.Start], append(block, out[ue.End:]...)...)
		res.Corrected = append([]int{fx.at + 1}, res.Corrected...)
	}
	if o.PR > 0 && len(fixes) > 0 && len(res.Corrected) == 0 && len(added) == 0 {
		return nil, conflictf("the PR's pr-link corrections are already present on main")
	}
	// new entries, in their order, without those upstream already has
	have := map[string]bool{}
	for _, e := range u.f.Entries {
		have[e.Identity()] = true
	}
	nl := []byte("\n")
	if bytes.Contains(upstream, []byte("\r\n")) {
		nl = []byte("\r\n")
	}
	var blocks [][]byte
	for _, e := range added {
		if have[e.Identity()] {
			res.Kept = append(res.Kept, e.Index)
			continue
		}
		have[e.Identity()] = true
		block := append([]byte(nil), e.Raw(c.f)...)
		if o.PR > 0 && e.PRLink() != lk.forPR(o.PR) {
			if block, err = replacePRLink(block, lk.forPR(o.PR)); err != nil {
				return nil, conflictf("new entry %d: %v", e.Index, err)
			}
			res.Relinked = append(res.Relinked, e.Index)
		}
		if !bytes.HasSuffix(block, []byte("\n")) {
			block = append(block, nl...)
		}
		blocks = append(blocks, block)
		res.Appended = append(res.Appended, e.Index)
	}
	if o.PR > 0 && len(added) > 0 && len(blocks) == 0 {
		return nil, conflictf("the PR has no changelog contribution remaining after merging main")
	}
	if len(blocks) > 0 {
		switch {
		case blank(out) && len(u.f.Entries) == 0 && len(res.Corrected) == 0:
			out = out[:0] // an empty file: nothing to separate from
		case bytes.HasSuffix(out, append(append([]byte(nil), nl...), nl...)):
		case bytes.HasSuffix(out, []byte("\n")):
			out = append(out, nl...)
		default: // no final newline upstream: end its line, then the empty one
			out = append(out, nl...)
			out = append(out, nl...)
		}
		out = append(out, bytes.Join(blocks, nl)...)
	}
	res.Bytes = out
	if err := checkMerged(u, c, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkMerged re-reads the result: upstream's entries first, as they
// were (pr-links aside where corrected), then the appended ones.
func checkMerged(u, c *mergeSide, res *MergeResult) error {
	m, err := parseSide("merged", res.Bytes)
	if err != nil {
		return fmt.Errorf("perflog's merge does not read back (a bug): %w", err)
	}
	if len(m.f.Entries) != len(u.f.Entries)+len(res.Appended) {
		return fmt.Errorf("perflog's merge reads back %d entries, not %d (a bug)", len(m.f.Entries), len(u.f.Entries)+len(res.Appended))
	}
	for i, e := range u.f.Entries {
		if m.f.Entries[i].Identity() != e.Identity() {
			return fmt.Errorf("perflog's merge changed upstream entry %d (a bug)", i+1)
		}
	}
	for k, idx := range res.Appended {
		if m.f.Entries[len(u.f.Entries)+k].Identity() != c.f.Entries[idx-1].Identity() {
			return fmt.Errorf("perflog's merge changed contributed entry %d (a bug)", idx)
		}
	}
	return nil
}

var rePRLinkLine = regexp.MustCompile(`(?m)^  pr-link:[^\r\n]*`)

// replacePRLink sets the one top-level pr-link line of an entry's bytes.
func replacePRLink(block []byte, link string) ([]byte, error) {
	locs := rePRLinkLine.FindAllIndex(block, -1)
	if len(locs) != 1 {
		return nil, fmt.Errorf("could not locate exactly one pr-link line in the entry")
	}
	l := locs[0]
	out := append([]byte(nil), block[:l[0]]...)
	out = append(out, "  pr-link: "+link...)
	return append(out, block[l[1]:]...), nil
}

// entryName names an entry for a message: its first config-key.
func entryName(e *Entry) string {
	if ks := e.ConfigKeyLines(); len(ks) > 0 {
		name := ks[0].Key
		if len(ks) > 1 {
			name += fmt.Sprintf(" and %d more", len(ks)-1)
		}
		return strings.TrimSpace(name)
	}
	return fmt.Sprintf("line %d", e.Line)
}

// Upstream tells which side of a merge is upstream: the side whose new
// entries (since base) are all on mainline, the base branch's changelog
// (nil when it could not be read). told is false when the entries cannot
// tell (neither or both sides qualify, a side does not parse): the caller
// then keeps its default.
func Upstream(base, ours, theirs, mainline []byte) (oursUp, told bool) {
	if mainline == nil {
		return false, false
	}
	parse := func(raw []byte) []*Entry {
		f, root, err := parseWithRoot("perf-changelog.yaml", raw)
		if err != nil || root.Kind != pyyaml.Seq {
			return nil
		}
		return f.Entries
	}
	on := map[string]bool{}
	for _, e := range parse(mainline) {
		on[e.Identity()+"\x00"+e.PRLink()] = true
	}
	nb := len(parse(base))
	onMain := func(raw []byte) bool {
		es := parse(raw)
		if len(es) <= nb {
			return false // nothing new: says nothing
		}
		for _, e := range es[nb:] {
			if !on[e.Identity()+"\x00"+e.PRLink()] {
				return false
			}
		}
		return true
	}
	o, t := onMain(ours), onMain(theirs)
	return o, o != t
}
