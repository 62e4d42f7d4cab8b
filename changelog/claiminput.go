package changelog

import (
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/internal/pyyaml"
)

// claimInput is what the claims of an entry (parsed from the head file,
// index its 1-based position there) are checked from: its bullets and
// their lines, its config-keys patterns and whether it says append-only.
func claimInput(index int, entry *pyyaml.Value) claims.Entry {
	e := claims.Entry{Index: index, Keys: stringsOf(entry, FieldConfigKeys), Line: entry.Line}
	e.Bullets, e.Lines = bulletsOf(entry)
	if fields, _ := validate(entry); fields != nil {
		e.AppendOnly = fields.AppendOnly
	}
	return e
}

// bulletsOf returns the description bullets of an entry and their lines
// (a description written as one string is one bullet); nil when it has
// no description.
func bulletsOf(entry *pyyaml.Value) (bullets []string, lines []int) {
	desc, ok := entry.Get(FieldDescription)
	if !ok {
		return nil, nil
	}
	if s, ok := laxStr(desc); ok {
		return []string{s}, []int{desc.Line}
	}
	bullets, lines = []string{}, []int{}
	for _, it := range desc.Items {
		if s, ok := laxStr(it); ok {
			bullets = append(bullets, s)
			lines = append(lines, it.Line)
		}
	}
	return bullets, lines
}

// claimLine is the line in the file of the claim of an entry (parsed from
// that file) read from bullet (-1: of the entry as a whole), as
// claims.Check reports it.
func claimLine(entry *pyyaml.Value, bullet int) int {
	e := claims.Entry{Line: entry.Line}
	_, e.Lines = bulletsOf(entry)
	return e.LineOf(bullet)
}

// Evidence is a line that decided a finding or a claim's verdict.
type Evidence = claims.Evidence

// ClaimInput is the entry as its claims are checked.
func (e *Entry) ClaimInput() claims.Entry { return claimInput(e.Index, e.value) }

// ClaimLine is the line in the file of the entry's claim read from bullet
// (-1: of the entry as a whole), as claims.Check reports it.
func (e *Entry) ClaimLine(bullet int) int { return claimLine(e.value, bullet) }
