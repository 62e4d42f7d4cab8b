package claims

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// A value as bullets write one after a flag or a variable: 0.85, fp8_e4m3,
// v0.5.6, true; optionally in backticks.
const valuePat = "`?" + `([A-Za-z0-9.][A-Za-z0-9_.+/:-]*[A-Za-z0-9_]|[A-Za-z0-9])` + "`?"

var (
	// reChange is what follows a name when a bullet states its old and
	// new value: "from A to B", "A -> B", "A → B", "=A => B".
	reChange = regexp.MustCompile(`^(?:\s*[:=]\s*|\s+)(?:from\s+` + valuePat + `\s+to\s+` + valuePat + `|` + valuePat + `\s*(?:->|→|=>)\s*` + valuePat + `)`)
	// reArrow is "-> B" after a value read already (--x 0.8 -> 0.9,
	// X=0 -> 1).
	reArrow = regexp.MustCompile(`^\s*(?:->|→|=>)\s*` + valuePat)
	// reToValue is "to B" after a name a verb of setting governs
	// ("raise --x to 0.9").
	reToValue = regexp.MustCompile(`^\s+to\s+` + valuePat)
	// reStays is "stays B", "remains at B" after a name: its value,
	// unchanged.
	reStays = regexp.MustCompile(`^\s+(?:stays|stay|remains|remain|is kept|kept)\s+(?:at\s+)?` + valuePat)
	// reFormula: what follows a number that makes it part of a formula
	// ("2x concurrency", "8192 * TP", "90%"), not a value.
	reFormula = regexp.MustCompile(`^(?:[xX×*%]|\s*[*×]|\s+(?:x|times)\b)`)
	// reSetVerb are the verbs that give a name a new value ("raise X to
	// B"); "to B" after a name is its value only when one of them governs.
	reSetVerb = regexp.MustCompile(`(?i)^(set(?:s|ting)?|raise[sd]?|raising|lower(?:s|ed|ing)?|increase[sd]?|increasing|decrease[sd]?|decreasing|reduce[sd]?|reducing|bump(?:s|ed)?|change[sd]?|changing|update[sd]?|tune[sd]?|adjust(?:s|ed)?|switch(?:es|ed)?|cap(?:s|ped)?|pin(?:s|ned)?|re-?pin(?:s|ned)?|restore[sd]?|reset(?:s)?)$`)
)

// statedChange reads "from A to B" or "A -> B" right after a name: the
// old and new value and the length of the text read.
func statedChange(rest string) (from, to string, n int, ok bool) {
	m := reChange.FindStringSubmatchIndex(rest)
	if m == nil {
		return "", "", 0, false
	}
	if m[2] >= 0 {
		from, to = rest[m[2]:m[3]], rest[m[4]:m[5]]
	} else {
		from, to = rest[m[6]:m[7]], rest[m[8]:m[9]]
	}
	if !isValueWord(from) || !isValueWord(to) {
		return "", "", 0, false
	}
	return from, to, m[1], true
}

// statedArrow reads "-> B" after a value (the old one): the new value.
func statedArrow(rest string) (to string, n int, ok bool) {
	m := reArrow.FindStringSubmatchIndex(rest)
	if m == nil || !isValueWord(rest[m[2]:m[3]]) {
		return "", 0, false
	}
	return rest[m[2]:m[3]], m[1], true
}

// statedTo reads "to B" after a name that a verb of setting governs
// (before is the clause's text before the name). B must look like a
// value, not a word of prose ("change --x to match the sibling"): a
// number, a switch word, or a word with a digit, '_' or '.'.
func statedTo(before, rest string) (to string, n int, ok bool) {
	m := reToValue.FindStringSubmatchIndex(rest)
	if m == nil {
		return "", 0, false
	}
	to = rest[m[2]:m[3]]
	if !isValueWord(to) || !looksLikeValue(to) || reFormula.MatchString(rest[m[3]:]) {
		return "", 0, false
	}
	ws := reWord.FindAllString(before, -1)
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		if reSetVerb.MatchString(w) {
			return to, m[1], true
		}
		if rePos.MatchString(w) || reNeg.MatchString(w) || reCounter.MatchString(w) {
			break // "add --x to 0.9 points"? another verb governs
		}
	}
	return "", 0, false
}

// looksLikeValue: a number, a switch word, or a word with a digit, '_'
// or '.', and not a multiplier ("2x").
func looksLikeValue(v string) bool {
	return (strings.ContainsAny(v, "0123456789_.") || isSwitchWord(v)) && !reMultiplier.MatchString(v)
}

var reMultiplier = regexp.MustCompile(`^[0-9.]+[xX]$`)

func isValueWord(v string) bool {
	return v != "" && !stopWords[strings.ToLower(v)] && !rePos.MatchString(v) && !reNeg.MatchString(v)
}

func isSwitchWord(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "on", "off", "none", "auto":
		return true
	}
	return false
}

// statedValue reads the value a bullet states for the name c read before
// rest (nameEnd is where the name ends, end where what was read so far
// ends, both in the clause): "from A to B" or "A -> B" right after the
// name, "-> B" after a value read already, "to B" under a verb of
// setting (before is the clause's text before the name). It returns the
// end of what was read.
func statedValue(c *Claim, before, rest string, nameEnd, end int) int {
	if from, to, n, ok := statedChange(rest); ok {
		c.From, c.Value, c.Strong, c.stated = from, to, true, true
		return nameEnd + n
	}
	if c.Value != "" {
		if to, n, ok := statedArrow(rest[end-nameEnd:]); ok {
			c.From, c.Value, c.stated = c.Value, to, true
			return end + n
		}
		return end
	}
	if to, n, ok := statedTo(before, rest); ok {
		c.Value, c.Strong, c.stated = to, true, true
		return nameEnd + n
	}
	if m := reStays.FindStringSubmatchIndex(rest); m != nil && looksLikeValue(rest[m[2]:m[3]]) && !reFormula.MatchString(rest[m[3]:]) {
		c.Value = rest[m[2]:m[3]] // "--x stays 0.9": a value, as strong as what governs it
		return nameEnd + m[1]
	}
	return end
}

// launchedChange checks a claim that states a change of value ("from A
// to B", "A -> B") against what the change did to the launches: every
// matched point whose setting changed must have gone from A to B, and a
// change that changed the setting at no point does not do what the
// bullet says. ok is false when there is nothing to compare with (no
// complete dry run, a recipe new at head).
func (s *subject) launchedChange(r *Result) (ok bool) {
	if len(s.effects) == 0 || r.From == "" || r.Value == "" || (r.Kind == KindFlag && !strings.HasPrefix(r.Name, "-")) {
		return false
	}
	same := func(v, want string) bool { return sameValue(v, want) || containsWord(v, want) }
	var n int
	var first *Evidence
	for _, e := range s.effects {
		if len(e.Base) == 0 {
			return false // a recipe new at head: "from" is about another recipe
		}
		for _, d := range e.Diffs {
			if !r.Claim.about(d) {
				continue
			}
			ev := s.atEvidence(d.At)
			where := e.Key + " point " + pointLabel(e, d.Points)
			launches, it := "launches", "it"
			if len(d.Points) > 1 {
				launches, it = "launch", "they"
			}
			switch {
			case d.HeadAbsent:
				r.set(Contradicted, fmt.Sprintf("%s %s without %s (%s launched %s before this change)", where, launches, r.Name, it, named(&r.Claim, d.Base)), ev)
				return true
			case !same(d.Head, r.Value):
				r.set(Contradicted, fmt.Sprintf("%s %s %s, not %s (%s launched %s before this change)", where, launches, named(&r.Claim, d.Head), r.Value, it, orNone(d.Base, d.BaseAbsent)), ev)
				return true
			case !d.BaseAbsent && !same(d.Base, r.From):
				r.set(Contradicted, fmt.Sprintf("%s launched %s before this change, not %s", where, named(&r.Claim, d.Base), r.From), ev)
				return true
			}
			n += len(d.Points)
			if first == nil {
				first = &ev
			}
		}
	}
	if first != nil {
		r.set(Confirmed, fmt.Sprintf("%d points went from %s to %s", n, named(&r.Claim, r.From), r.Value), *first)
		return true
	}
	// nothing changed it: the same value before and after
	for _, lp := range s.points {
		v, _, found := lp.valueOf(&r.Claim)
		if !found || !same(v, r.Value) {
			return false // the head value decides (launchedFlag, launchedEnv)
		}
	}
	if len(s.points) == 0 {
		return false
	}
	lp := s.points[0]
	v, c, _ := lp.valueOf(&r.Claim)
	r.set(Contradicted, fmt.Sprintf("this change did not change %s: %s launched %s before it too", r.Name, lp.key+" point "+lp.pt.Label(), named(&r.Claim, v)), s.launchEvidence(c))
	return true
}

// about says whether a launch difference is of the setting a flag or
// variable claim names: a server's, router's or client's option for a
// flag, a variable for an env claim.
func (c *Claim) about(d recipe.LaunchDiff) bool {
	if name := d.Name; name != c.Name {
		// a multi-node worker's setting carries its role ("decode --x")
		role, rest, ok := strings.Cut(name, " ")
		if !ok || rest != c.Name || strings.HasPrefix(role, "-") {
			return false
		}
	}
	if c.Kind == KindEnv {
		return d.Kind == "env"
	}
	return d.Kind == "flag" || d.Kind == "client"
}

// named renders a claim's name with a value: "--x 0.8", "X=1".
func named(r *Claim, v string) string {
	if r.Kind == KindEnv {
		return r.Name + "=" + v
	}
	if v == "" {
		return r.Name
	}
	return r.Name + " " + v
}

func orNone(v string, absent bool) string {
	if absent {
		return "nothing"
	}
	return v
}

// pointLabel names the first of a diff's head points, and how many
// others share the difference.
func pointLabel(e *recipe.Effect, idx []int) string {
	if len(idx) == 0 {
		return "?"
	}
	label := fmt.Sprint(idx[0])
	for i := range e.Head {
		if e.Head[i].Point.Index == idx[0] {
			label = e.Head[i].Point.Label()
			break
		}
	}
	if len(idx) > 1 {
		label += fmt.Sprintf(" and %d more", len(idx)-1)
	}
	return label
}

// atEvidence is the head line a launch diff points at (file:line).
func (s *subject) atEvidence(at string) Evidence {
	file, line := recipe.SplitAt(at)
	return Evidence{File: file, Line: line, Text: s.ch.Head.LineText(file, line), Rev: "head"}
}

// valueOf is the value a point launches for a flag or variable claim:
// the first of its commands (servers, routers, clients) that has a flag,
// the first server that has a variable.
func (lp launchedPoint) valueOf(r *Claim) (string, *dryrun.Command, bool) {
	if r.Kind == KindFlag {
		for _, c := range lp.commands {
			if v, found := c.Flag(r.Name); found {
				return strings.Join(v, " "), c, true
			}
		}
		return "", nil, false
	}
	for _, c := range lp.servers {
		if v, found := c.Env[r.Name]; found {
			return v, c, true
		}
	}
	return "", nil, false
}
