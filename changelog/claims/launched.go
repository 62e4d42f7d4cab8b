package claims

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/lint"
)

// launchedPoint is a head point of a listed recipe and what it launches.
type launchedPoint struct {
	key      string
	pt       *recipe.LaunchPoint
	servers  []*dryrun.Command
	commands []*dryrun.Command // servers, routers and clients
}

// launchedServers are the head servers of the keys' points and all their
// launches (servers, routers, clients), nil unless every key was dry-run
// completely; points has them by point.
func launchedServers(keys []string, effects map[string]*recipe.Effect) (servers, all []*dryrun.Command, points []launchedPoint) {
	for _, k := range keys {
		e, ok := effects[k]
		if !ok || !e.Complete {
			return nil, nil, nil
		}
		for i := range e.Head {
			l := e.Head[i].Launch
			if l == nil {
				continue
			}
			if l.Status == dryrun.StatusDescribed {
				// a multi-node recipe file: its options are settings of
				// srt-slurm (a trtllm config has no flags); the files decide
				return nil, nil, nil
			}
			lp := launchedPoint{key: k, pt: &e.Head[i].Point}
			for j := range l.Servers {
				lp.servers = append(lp.servers, &l.Servers[j])
			}
			lp.commands = append(lp.commands, lp.servers...)
			for j := range l.Routers {
				lp.commands = append(lp.commands, &l.Routers[j])
			}
			for j := range l.Clients {
				lp.commands = append(lp.commands, &l.Clients[j])
			}
			servers = append(servers, lp.servers...)
			all = append(all, lp.commands...)
			if len(lp.servers) > 0 {
				points = append(points, lp)
			}
		}
	}
	return servers, all, points
}

// meets reports whether a point meets a claim's condition (any group);
// decided is false when the condition names what the point lacks (an ISL
// of an agentic point).
func meets(pt *recipe.LaunchPoint, when [][]Cond) (ok, decided bool) {
	for _, g := range when {
		all, known := true, true
		for _, c := range g {
			var v int64
			switch c.Var {
			case "conc":
				v = pt.Conc
			case "isl":
				v = pt.ISL
			case "osl":
				v = pt.OSL
			case "tp":
				v = pt.TP
			case "ep":
				v = pt.EP
			case "dpa": // 2 for DP attention, 1 without: never unknown
				v, c.Value = 1, c.Value+1
				if pt.DPAttn {
					v = 2
				}
			}
			if v == 0 {
				known = false
			} else if !c.Holds(v) {
				all = false
			}
		}
		if all && known {
			return true, true
		}
		if known {
			decided = true
		}
	}
	return false, decided
}

// launchedWhen checks a conditional flag or variable claim against the
// launches of the points that meet its condition. Among the recipes that
// launch the name anywhere (all of them when none does), every point that
// meets the condition must carry it (with the value claimed), and none
// must for a negated claim. ok is false when there is nothing to check.
func (s *subject) launchedWhen(r *Result) (ok bool) {
	if len(s.points) == 0 || (r.Kind == KindFlag && !strings.HasPrefix(r.Name, "-")) {
		return false
	}
	carriers := map[string]bool{}
	for _, lp := range s.points {
		if _, _, found := lp.valueOf(&r.Claim); found {
			carriers[lp.key] = true
		}
	}
	if len(carriers) == 0 && r.Kind == KindEnv && !r.Negated {
		return false // a shell variable named like an environment variable: the files decide
	}
	value := r.Value
	if strings.HasPrefix(value, "-") || strings.ContainsAny(value, "=:{[") {
		value = ""
	}
	cond := condText(r.When)
	var met int
	for _, lp := range s.points {
		if len(carriers) > 0 && !carriers[lp.key] {
			continue
		}
		in, _ := meets(lp.pt, r.When)
		if !in {
			continue
		}
		met++
		v, c, found := lp.valueOf(&r.Claim)
		where := lp.key + " point " + lp.pt.Label()
		switch {
		case r.Negated && found:
			r.set(Contradicted, fmt.Sprintf("%s launches %s although it meets %s", where, r.Name, cond), s.launchEvidence(c))
			return true
		case !r.Negated && !found && strings.HasPrefix(r.Name, "-") && hidden(lp.servers) != nil:
			c := hidden(lp.servers)
			r.set(Unverified, fmt.Sprintf("%s meets %s; whether it launches %s is not known: %s passes options the dry run cannot read (%s)",
				where, cond, r.Name, c.Program(), c.HiddenOptions()[0]), s.launchEvidence(c))
			return true
		case !found && r.Kind == KindEnv && hiddenEnv(lp.servers) != nil:
			c := hiddenEnv(lp.servers)
			r.set(Unverified, fmt.Sprintf("%s meets %s; whether it starts with %s is not known: it exports what a program the dry run does not run printed (%s)",
				where, cond, r.Name, c.HiddenEnv[0]), s.launchEvidence(c))
			return true
		case !r.Negated && !found:
			r.set(Contradicted, fmt.Sprintf("%s meets %s and launches without %s", where, cond, r.Name), s.launchEvidence(lp.servers[0]))
			return true
		case !r.Negated && value != "" && v != "" && !sameValue(v, value) && !strings.EqualFold(v, value) && !containsWord(v, value):
			r.set(Contradicted, fmt.Sprintf("%s meets %s and launches %s %s, not %s", where, cond, r.Name, v, value), s.launchEvidence(c))
			return true
		}
	}
	if met == 0 {
		r.set(Unverified, "no point of the listed recipes meets "+cond)
		return true
	}
	if !r.Negated && value != "" && (s.beyondCondition(r, value, cond) || s.outsideUnknown(r, value, cond)) {
		return true
	}
	verb := "launch"
	if r.Negated {
		verb = "launch without"
	}
	which := fmt.Sprintf("the %d points that meet", met)
	if met == 1 {
		which, verb = "the one point that meets", verb+"es"
		if r.Negated {
			verb = "launches without"
		}
	}
	r.set(Confirmed, fmt.Sprintf("%s %s %s %s", which, cond, verb, r.Name), s.launchEvidence(s.points[0].servers[0]))
	return true
}

// hidden is the first of the commands that may pass options the dry run
// cannot name (nil: none).
func hidden(cs []*dryrun.Command) *dryrun.Command {
	for _, c := range cs {
		if len(c.HiddenOptions()) > 0 {
			return c
		}
	}
	return nil
}

// hiddenEnv is the first of cs that may start with variables the dry
// run cannot name (Command.HiddenEnv), nil when none.
func hiddenEnv(cs []*dryrun.Command) *dryrun.Command {
	for _, c := range cs {
		if len(c.HiddenEnv) > 0 {
			return c
		}
	}
	return nil
}

// launchEvidence is where a launched server starts.
func (s *subject) launchEvidence(c *dryrun.Command) Evidence {
	file, line := recipe.SplitAt(c.At)
	text := s.ch.Head.LineText(file, line)
	if text == "" {
		text = "launches " + c.Program()
	}
	return Evidence{File: file, Line: line, Text: text, Rev: "head"}
}

// envEvidence is where a server's variable got its value: the line that
// exported it (Command.EnvAt), else the server's own.
func (s *subject) envEvidence(c *dryrun.Command, name string) Evidence {
	if at := c.EnvAt[name]; at != "" {
		file, line := recipe.SplitAt(at)
		if text := s.ch.Head.LineText(file, line); text != "" {
			return Evidence{File: file, Line: line, Text: text, Rev: "head"}
		}
	}
	return s.launchEvidence(c)
}

// launchedFlag checks a flag claim against the launched servers; ok is
// false when there are none to check against.
func (s *subject) launchedFlag(r *Result) (ok bool) {
	if len(s.launched) == 0 || !strings.HasPrefix(r.Name, "-") {
		return false
	}
	if !r.Negated && s.launchedChange(r) {
		return true
	}
	var with []*dryrun.Command
	var vals []string
	for _, c := range s.commands {
		if v, found := c.Flag(r.Name); found {
			with = append(with, c)
			vals = append(vals, strings.Join(v, " "))
		}
	}
	n := len(s.launched)
	value := r.Value
	if strings.HasPrefix(value, "-") {
		value = "" // "--a --b": two options, not a value
	}
	if len(with) == 0 && hidden(s.launched) != nil {
		// a server may pass it unread: the files decide
		return false
	}
	if r.Negated {
		if len(with) == 0 {
			r.set(Confirmed, fmt.Sprintf("none of the %s launches %s", s.pointCount(), r.Name), s.launchEvidence(s.launched[0]))
			return true
		}
		return s.notRemoved(r, with[0]) // else what was removed where: the files, against the base, say
	}
	if len(with) == 0 {
		reason := fmt.Sprintf("none of the %d points of the listed recipes launches %s", n, r.Name)
		text := flagOccurrences(s.head.sources, r.Name, "head", false)
		for _, o := range text {
			if strings.HasPrefix(o.File, "runners/") {
				// a launcher's option is salloc's, srun's or docker's
				// (--time=300), not the server's: the files decide
				return false
			}
		}
		if s.undecided(r, fmt.Sprintf("the dry run's %d points do not launch %s", n, r.Name), s.launchEvidence(s.launched[0])) {
			return true
		}
		if len(text) == 0 && s.aliasUndecided(r) {
			return true
		}
		if len(text) > 0 {
			reason += fmt.Sprintf(" (%s:%d has it, but it does not reach the server's command line: a branch not taken, or an array reset)", text[0].File, text[0].Line)
		}
		r.set(Contradicted, reason, s.launchEvidence(s.launched[0]))
		r.firm = r.mention && len(text) == 0 && len(flagOccurrences(s.base.sources, r.Name, "base", false)) == 0
		if alt := s.similarEnv(r.Name); alt != nil {
			r.Reason += "; they set " + alt.Text + " instead"
			r.Evidence = append(r.Evidence, *alt)
		}
		return true
	}
	if j, ok := jsonValue(value); ok && (r.Strong || r.mention) {
		// a JSON value ("--compilation-config '{"mode":3}'") is the same
		// when it holds the same, whatever its spacing and key order
		for i, v := range vals {
			if sameJSONValue(v, j) {
				r.set(Confirmed, fmt.Sprintf("%s %s is launched%s", r.Name, v, s.atPoints(&r.Claim, func(got string) bool { return sameJSONValue(got, j) })), s.launchEvidence(with[i]))
				return true
			}
		}
		r.set(Contradicted, fmt.Sprintf("%s launches %s, not %s", s.pointWith(&r.Claim, vals[0]), named(&r.Claim, vals[0]), value)+others(vals), s.launchEvidence(with[0]))
		r.firm = r.mention
		return true
	}
	if value == "" || strings.ContainsAny(value, "=:{[") {
		r.set(Confirmed, fmt.Sprintf("%s is launched%s", r.Name, s.atPoints(&r.Claim, nil)), s.launchEvidence(with[0]))
		return true
	}
	for i, v := range vals {
		// the value as launched, one word of it (--speculative-config
		// eagle3 for a JSON naming the method), or an option without a
		// value (the claim's "value" is prose)
		if sameValue(v, value) || strings.EqualFold(v, value) || v == "" || containsWord(v, value) {
			r.set(Confirmed, fmt.Sprintf("%s %s is launched%s", r.Name, v, s.atPoints(&r.Claim, func(got string) bool { return got == v })), s.launchEvidence(with[i]))
			return true
		}
	}
	if s.namesVariable(value, with) {
		r.set(Confirmed, fmt.Sprintf("%s is launched, its value from %s%s", r.Name, strings.Trim(value, "${}"), s.atPoints(&r.Claim, nil)), s.launchEvidence(with[0]))
		return true
	}
	if !r.Strong && !(r.mention && valueWord(value)) {
		return false // a value in prose ("--x stays"): the files say whether it is one
	}
	if s.undecided(r, fmt.Sprintf("the dry run's points launch %s %s", r.Name, strings.Join(dedupe(vals), ", ")), s.launchEvidence(with[0])) {
		return true
	}
	r.set(Contradicted, fmt.Sprintf("%s launches %s, not %s", s.pointWith(&r.Claim, vals[0]), named(&r.Claim, vals[0]), value)+others(vals), s.launchEvidence(with[0]))
	r.firm = r.mention
	return true
}

// notRemoved contradicts a removal claim ("drop --x") that the launches
// deny outright: points still launch the name, and the change removed it
// from none of the points it launched at before, nor changed it there (it
// may have added it to others; every listed recipe was
// compared point by point). A removal the change made at some points
// while others still launch the name contradicts a claim whose bullet
// names no scope and no value (whole): "Remove --x" speaks of every
// point of the listed recipes. ok is false otherwise: a scoped removal
// from some points, or an unconditional claim of a conditional one, the
// files decide.
func (s *subject) notRemoved(r *Result, still *dryrun.Command) (ok bool) {
	if len(s.effects) == 0 || len(r.When) > 0 {
		return false
	}
	whole := r.whole && r.Value == ""
	added := false
	removed := map[string]bool{} // points the change removed it from, by key and index
	for _, e := range s.effects {
		if len(e.Base) == 0 {
			if !r.absent {
				return false // a new recipe: "removed" is about another one
			}
			added = true // "X is omitted": of the new recipe
			continue
		}
		for _, d := range e.Diffs {
			if !r.Claim.about(d) || d.BaseAbsent {
				continue
			}
			if !whole {
				return false // removed or changed somewhere: the files decide
			}
			if d.HeadAbsent {
				for _, i := range d.Points {
					removed[fmt.Sprint(e.Key, "/", i)] = true
				}
			}
		}
	}
	if len(removed) > 0 {
		var kept []launchedPoint
		for _, lp := range s.points {
			if _, _, found := lp.valueOf(&r.Claim); found {
				kept = append(kept, lp)
			}
		}
		if len(kept) == 0 {
			return false
		}
		ev := still
		if len(kept[0].servers) > 0 {
			ev = kept[0].servers[0]
		}
		r.set(Contradicted, fmt.Sprintf("%d of the %s still launch %s (%s point %s, for one); the change removed it from %d points", len(kept), s.pointCount(), r.Name, kept[0].key, kept[0].pt.Label(), len(removed)), s.launchEvidence(ev))
		return true
	}
	n := 0
	for i := range s.points {
		if _, _, found := s.points[i].valueOf(&r.Claim); found {
			n++
		}
	}
	if added {
		r.set(Contradicted, fmt.Sprintf("%d of the %s launch %s", n, s.pointCount(), r.Name), s.launchEvidence(still))
		return true
	}
	r.set(Contradicted, fmt.Sprintf("%d of the %s still launch %s, as before this change, which removed it from none", n, s.pointCount(), r.Name), s.launchEvidence(still))
	return true
}

// namesVariable says whether a value is the name of a variable the
// servers start with or the scripts read ("passes --ep-size EP_SIZE"): a
// reference, not a value.
func (s *subject) namesVariable(value string, cmds []*dryrun.Command) bool {
	name := strings.Trim(value, "${}")
	for _, c := range cmds {
		if _, ok := c.Env[name]; ok {
			return true
		}
	}
	if !IsEnvName(name) {
		return false
	}
	for _, src := range s.head.sources {
		for _, l := range src.lines {
			if strings.Contains(l, "$"+name) || strings.Contains(l, "${"+name) {
				return true // a variable of the script
			}
		}
	}
	return false
}

// undecided leaves r unverified when a script of the head sets what it
// claims (its name and value on one line) in a branch of an if whose
// condition depends on the machine the benchmark runs on
// (recipe.RuntimeBranchAt): the dry run, which launched otherwise
// (launched says how), took a branch without knowing which one runs.
func (s *subject) undecided(r *Result, launched string, ev Evidence) bool {
	for _, src := range s.head.sources {
		if !strings.HasSuffix(src.file, ".sh") {
			continue
		}
		var sc *lint.Script // parsed at the first line that sets the claim
		for i, l := range src.lines {
			if !strings.Contains(l, r.Name) || (r.Value != "" && !containsWord(l, r.Value)) || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			if sc == nil {
				sc = lint.Parse(src.file, []byte(strings.Join(src.lines, "\n")))
			}
			b, ok := sc.RuntimeBranchAt(src.first + i)
			if !ok {
				continue
			}
			r.set(Unverified, fmt.Sprintf("%s, but %s:%d sets %s in a branch of `if %s` (line %d), which depends on the machine the benchmark runs on",
				launched, src.file, src.first+i, strings.TrimSpace(l), b.Cond, b.Line),
				ev, Evidence{File: src.file, Line: src.first + i, Text: strings.TrimSpace(l), Rev: "head"})
			return true
		}
	}
	return false
}

// containsWord reports whether v holds w as a whole word (any case).
func containsWord(v, w string) bool {
	if w == "" {
		return false
	}
	re, err := regexp.Compile(`(?i)(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(w) + `($|[^A-Za-z0-9_])`)
	return err == nil && re.MatchString(v)
}

// launchedEnv checks a variable claim against the launched servers'
// environment; ok is false when there are none to check against.
func (s *subject) launchedEnv(r *Result) (ok bool) {
	if len(s.launched) == 0 {
		return false
	}
	if !r.Negated && s.launchedChange(r) {
		return true
	}
	name := r.Name
	var with []*dryrun.Command
	var vals []string
	for _, c := range s.launched {
		if v, found := c.Env[name]; found {
			with = append(with, c)
			vals = append(vals, v)
		}
	}
	n := len(s.launched)
	if r.Negated {
		if len(with) == 0 && hiddenEnv(s.launched) != nil {
			return false // a server may start with it unnamed: the files decide
		}
		if len(with) == 0 {
			r.set(Confirmed, fmt.Sprintf("no server of the %s starts with %s set", s.pointCount(), name), s.launchEvidence(s.launched[0]))
			return true
		}
		return s.notRemoved(r, with[0]) // else what was removed where: the files, against the base, say
	}
	if len(with) == 0 {
		// a shell variable the scripts use (an argument's value, an
		// array) is named like an environment variable: the files decide
		return false
	}
	if r.Value == "" {
		r.set(Confirmed, fmt.Sprintf("%d of %d servers start with %s=%s%s", len(with), n, name, vals[0], s.atPoints(&r.Claim, nil)), s.envEvidence(with[0], name))
		return true
	}
	for i, v := range vals {
		if sameValue(v, r.Value) || sameValue(strings.TrimRight(v, ":.,;"), r.Value) {
			r.set(Confirmed, fmt.Sprintf("servers start with %s=%s%s", name, v, s.atPoints(&r.Claim, func(got string) bool { return got == v })), s.envEvidence(with[i], name))
			return true
		}
	}
	if !r.Strong {
		return false // a value in prose: the files say whether it is one
	}
	if s.undecided(r, fmt.Sprintf("the dry run's servers start with %s=%s", name, strings.Join(dedupe(vals), ", ")), s.envEvidence(with[0], name)) {
		return true
	}
	r.set(Contradicted, fmt.Sprintf("%s starts its server with %s, not %s", s.pointWith(&r.Claim, vals[0]), named(&r.Claim, vals[0]), r.Value)+others(vals), s.envEvidence(with[0], name))
	return true
}

// pointCount is "N points" of the dry run ("N points of KEY" when one
// recipe is listed; "one point" for one).
func (s *subject) pointCount() string {
	n := fmt.Sprintf("%d points", len(s.points))
	if len(s.points) == 1 {
		n = "one point"
	}
	if len(s.keys) == 1 {
		n += " of " + s.keys[0]
	}
	return n
}

// atPoints says at which of the dry run's points a claim's name is
// launched (with a value match accepts, when match is set): " at all N
// points of KEY", or " at N of the M points; not at KEY point LABEL", so a
// confirmation says what it was checked against. It is "" when the
// points are not at hand.
func (s *subject) atPoints(c *Claim, match func(string) bool) string {
	n := 0
	var miss *launchedPoint
	for i := range s.points {
		lp := &s.points[i]
		if v, _, found := lp.valueOf(c); found && (match == nil || match(v)) {
			n++
		} else if miss == nil {
			miss = lp
		}
	}
	switch {
	case len(s.points) == 0:
		return ""
	case miss == nil && n == 1:
		return " at the one point, " + s.points[0].key + " point " + s.points[0].pt.Label()
	case miss == nil:
		return " at all " + s.pointCount()
	}
	where := miss.key + " point "
	if len(s.keys) == 1 {
		where = "point "
	}
	return fmt.Sprintf(" at %d of the %s; not at %s%s", n, s.pointCount(), where, miss.pt.Label())
}

// pointWith names the first point that launches a claim's name with value
// v ("the points" when the dry run's points are not at hand).
func (s *subject) pointWith(r *Claim, v string) string {
	for _, lp := range s.points {
		if got, _, found := lp.valueOf(r); found && got == v {
			return lp.key + " point " + lp.pt.Label()
		}
	}
	return "a point"
}

// others says which other values the points launch, if any.
func others(vals []string) string {
	d := dedupe(vals)
	if len(d) < 2 {
		return ""
	}
	return " (others: " + strings.Join(d[1:], ", ") + ")"
}

// beyondCondition finds a point outside a conditional claim's condition
// that this change gave the claimed value too ("0.8 when CONC>128 and
// ISL=8192" applied to every CONC>128): the condition does not hold as
// written. ok is true when it found one (r is then contradicted).
func (s *subject) beyondCondition(r *Result, value, cond string) (ok bool) {
	for _, e := range s.effects {
		for _, d := range e.Diffs {
			if !r.Claim.about(d) || d.HeadAbsent {
				continue
			}
			if !sameValue(d.Head, value) && !containsWord(d.Head, value) {
				continue
			}
			for _, idx := range d.Points {
				for i := range e.Head {
					pt := &e.Head[i].Point
					if pt.Index != idx {
						continue
					}
					if in, decided := meets(pt, r.When); in || !decided {
						continue
					}
					r.set(Contradicted, fmt.Sprintf("this change gave %s point %s %s too (it launched %s before), though it does not meet %s",
						e.Key, pt.Label(), named(&r.Claim, d.Head), orNone(d.Base, d.BaseAbsent), cond), s.atEvidence(d.At))
					return true
				}
			}
		}
	}
	return false
}

// outsideUnknown leaves a conditional claim unverified when only the
// head was dry-run (the audit: no base to compare) and points outside the
// condition launch the claimed value too: whether the change gave it to
// them, applying the setting too widely, only the base could tell.
func (s *subject) outsideUnknown(r *Result, value, cond string) (ok bool) {
	for _, e := range s.effects {
		if len(e.Base) > 0 || len(e.Diffs) > 0 {
			return false
		}
		if _, existed, err := s.ch.Base.Recipe(e.Key); err != nil || !existed {
			return false // an added recipe: its points are all new
		}
	}
	for _, lp := range s.points {
		if in, decided := meets(lp.pt, r.When); in || !decided {
			continue
		}
		if v, c, found := lp.valueOf(&r.Claim); found && (sameValue(v, value) || containsWord(v, value)) {
			r.set(Unverified, fmt.Sprintf("%s point %s launches %s too, though it does not meet %s; whether this change gave it to it is not known: its base was not dry-run",
				lp.key, lp.pt.Label(), named(&r.Claim, v), cond), s.launchEvidence(c))
			return true
		}
	}
	return false
}

// jsonValue parses a claim's value that is a JSON object or array (its
// quotes removed).
func jsonValue(v string) (any, bool) {
	v = strings.Trim(strings.TrimSpace(v), `'"`)
	if v == "" || (v[0] != '{' && v[0] != '[') {
		return nil, false
	}
	var x any
	if json.Unmarshal([]byte(v), &x) != nil {
		return nil, false
	}
	return x, true
}

// sameJSONValue says whether a launched value holds the JSON j.
func sameJSONValue(v string, j any) bool {
	x, ok := jsonValue(v)
	return ok && reflect.DeepEqual(x, j)
}
