package claims

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
)

// Claim verdicts (JSON contract).
const (
	Confirmed    = "confirmed"
	Contradicted = "contradicted"
	Unverified   = "unverified"
)

// Evidence is a line that decided a verdict.
type Evidence struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
	// Rev is "head" or "base".
	Rev string `json:"rev"`
}

func (e Evidence) String() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Result is a claim with its verdict.
type Result struct {
	Claim
	// Entry is the entry's 1-based index in the head file; Line the
	// bullet's line.
	Entry    int        `json:"entry"`
	Line     int        `json:"line"`
	Keys     []string   `json:"config_keys"`
	Verdict  string     `json:"verdict"`
	Reason   string     `json:"reason"`
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Entry is a changelog entry as its claims are checked: what it says
// (its description bullets), what about (its config-keys patterns) and
// where (the lines that claims are reported at).
type Entry struct {
	// Index is the entry's 1-based index in the head file.
	Index int
	// Keys are its config-keys patterns.
	Keys []string
	// Bullets are its description bullets, Lines the line of each; nil
	// Bullets: the entry has no description, and nothing of it is checked.
	Bullets []string
	Lines   []int
	// Line is the entry's line, where a claim of no bullet is reported.
	Line int
	// AppendOnly: the entry says append-only: true (a claim of its own).
	AppendOnly bool
}

// Check checks the claims of new entries against a change: the head
// state of the recipes they list (and the files that run them) and, for
// "from" values, the base state. A claim is contradicted only when the
// evidence says otherwise; what cannot be checked is unverified.
//
// Entries that list the same config-keys share what they are checked
// against, which is read once.
func Check(ch *recipe.Change, entries []Entry) []Result {
	return checkAll(nil, ch, entries, nil)
}

// CheckLaunched is Check by what the change's recipes launch
// too (LaunchEffects), as verify checks them: a flag or variable claim
// about a recipe that is dry-run is judged per point by its launches.
func CheckLaunched(ctx context.Context, ch *recipe.Change, entries []Entry, effects map[string]*recipe.Effect) []Result {
	return checkAll(ctx, ch, entries, effects)
}

// checkAll is Check, stopping early once ctx (when not nil) is
// cancelled. effects, when given, are the dry-run launches of the
// recipes: flag and variable claims about them are checked against what
// their points launch (see subject.launchedFlag).
func checkAll(ctx context.Context, ch *recipe.Change, entries []Entry, effects map[string]*recipe.Effect) []Result {
	var out []Result
	subjects := map[string]*subject{}
	changed := sync.OnceValue(func() []source { return changedSources(ch) })
	for _, e := range entries {
		if ctx != nil && ctx.Err() != nil {
			break
		}
		if e.Bullets == nil {
			continue
		}
		claims := Extract(e.Bullets)
		if e.AppendOnly {
			claims = append(claims, Claim{Kind: KindAppendOnly, Text: "append-only: true", Strong: true, Bullet: -1})
		}
		if len(claims) == 0 {
			continue
		}
		id := strings.Join(e.Keys, "\x00")
		subj := subjects[id]
		if subj == nil {
			subj = newSubject(ch, e.Keys, changed())
			subj.launched, subj.commands, subj.points = launchedServers(subj.keys, effects)
			subjects[id] = subj
		}
		for _, c := range claims {
			r := Result{Claim: c, Entry: e.Index, Keys: subj.keys, Line: e.LineOf(c.Bullet)}
			subj.check(&r)
			out = append(out, r)
		}
	}
	return out
}

// LineOf is the line a claim read from bullet is reported at: its
// bullet's, or the entry's for a claim of no bullet (append-only).
func (e *Entry) LineOf(bullet int) int {
	if bullet >= 0 && bullet < len(e.Lines) {
		return e.Lines[bullet]
	}
	return e.Line
}

// subject is what an entry's claims are checked against: the recipes it
// lists, at head and base, and the files that run them.
type subject struct {
	ch   *recipe.Change
	keys []string
	head side
	base side
	// changed are the head versions of the files the change touched
	// outside the master configs (scripts, recipe files, launchers).
	changed []source
	// launched are the servers the head points of every listed recipe
	// launch, when each was dry-run to an end (nil otherwise: the files'
	// text decides); commands adds their routers and clients (an option
	// claim may be about the router or the benchmark client).
	launched, commands []*recipe.Command
	points             []launchedPoint
}

// launchedPoint is a head point of a listed recipe and what it launches.
type launchedPoint struct {
	key      string
	pt       *recipe.LaunchPoint
	servers  []*recipe.Command
	commands []*recipe.Command // servers, routers and clients
}

// launchedServers are the head servers of the keys' points and all their
// launches (servers, routers, clients), nil unless every key was dry-run
// completely; points has them by point.
func launchedServers(keys []string, effects map[string]*recipe.Effect) (servers, all []*recipe.Command, points []launchedPoint) {
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
			if l.Status == recipe.StatusDescribed {
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
	lookup := func(lp launchedPoint) (string, *recipe.Command, bool) {
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
	carriers := map[string]bool{}
	for _, lp := range s.points {
		if _, _, found := lookup(lp); found {
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
		v, c, found := lookup(lp)
		where := lp.key + " point " + lp.pt.Label()
		switch {
		case r.Negated && found:
			r.set(Contradicted, fmt.Sprintf("%s launches %s although it meets %s", where, r.Name, cond), s.launchEvidence(c))
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
	verb := "launch"
	if r.Negated {
		verb = "launch without"
	}
	r.set(Confirmed, fmt.Sprintf("the %d points that meet %s %s %s", met, cond, verb, r.Name), s.launchEvidence(s.points[0].servers[0]))
	return true
}

// launchEvidence is where a launched server starts.
func (s *subject) launchEvidence(c *recipe.Command) Evidence {
	file, line := recipe.SplitAt(c.At)
	text := s.ch.Head.LineText(file, line)
	if text == "" {
		text = "launches " + c.Program()
	}
	return Evidence{File: file, Line: line, Text: text, Rev: "head"}
}

// launchedFlag checks a flag claim against the launched servers; ok is
// false when there are none to check against.
func (s *subject) launchedFlag(r *Result) (ok bool) {
	if len(s.launched) == 0 || !strings.HasPrefix(r.Name, "-") {
		return false
	}
	var with []*recipe.Command
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
	if r.Negated {
		if len(with) == 0 {
			r.set(Confirmed, fmt.Sprintf("no point launches %s", r.Name), s.launchEvidence(s.launched[0]))
			return true
		}
		return false // what was removed where: the files, against the base, say
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
		if len(text) > 0 {
			reason += fmt.Sprintf(" (%s:%d has it, but it does not reach the server's command line: a branch not taken, or an array reset)", text[0].File, text[0].Line)
		}
		r.set(Contradicted, reason, s.launchEvidence(s.launched[0]))
		if alt := s.similarEnv(r.Name); alt != nil {
			r.Reason += "; they set " + alt.Text + " instead"
			r.Evidence = append(r.Evidence, *alt)
		}
		return true
	}
	if value == "" || strings.ContainsAny(value, "=:{[") {
		r.set(Confirmed, fmt.Sprintf("%s is launched", r.Name), s.launchEvidence(with[0]))
		return true
	}
	for i, v := range vals {
		// the value as launched, one word of it (--speculative-config
		// eagle3 for a JSON naming the method), or an option without a
		// value (the claim's "value" is prose)
		if sameValue(v, value) || strings.EqualFold(v, value) || v == "" || containsWord(v, value) {
			r.set(Confirmed, fmt.Sprintf("%s %s is launched", r.Name, v), s.launchEvidence(with[i]))
			return true
		}
	}
	if !r.Strong {
		return false // a value in prose ("--x stays"): the files say whether it is one
	}
	if s.undecided(r, fmt.Sprintf("the dry run's points launch %s %s", r.Name, strings.Join(dedupe(vals), ", ")), s.launchEvidence(with[0])) {
		return true
	}
	r.set(Contradicted, fmt.Sprintf("the points launch %s %s, not %s", r.Name, strings.Join(dedupe(vals), ", "), value), s.launchEvidence(with[0]))
	return true
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
		var sc *recipe.Script // parsed at the first line that sets the claim
		for i, l := range src.lines {
			if !strings.Contains(l, r.Name) || (r.Value != "" && !containsWord(l, r.Value)) || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			if sc == nil {
				sc = recipe.Parse(src.file, []byte(strings.Join(src.lines, "\n")))
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
	name := r.Name
	var with []*recipe.Command
	var vals []string
	for _, c := range s.launched {
		if v, found := c.Env[name]; found {
			with = append(with, c)
			vals = append(vals, v)
		}
	}
	n := len(s.launched)
	if r.Negated {
		if len(with) == 0 {
			r.set(Confirmed, fmt.Sprintf("no server starts with %s set", name), s.launchEvidence(s.launched[0]))
			return true
		}
		return false // what was removed where: the files, against the base, say
	}
	if len(with) == 0 {
		// a shell variable the scripts use (an argument's value, an
		// array) is named like an environment variable: the files decide
		return false
	}
	if r.Value == "" {
		r.set(Confirmed, fmt.Sprintf("%d of %d servers start with %s=%s", len(with), n, name, vals[0]), s.launchEvidence(with[0]))
		return true
	}
	for i, v := range vals {
		if sameValue(v, r.Value) || sameValue(strings.TrimRight(v, ":.,;"), r.Value) {
			r.set(Confirmed, fmt.Sprintf("servers start with %s=%s", name, v), s.launchEvidence(with[i]))
			return true
		}
	}
	if !r.Strong {
		return false // a value in prose: the files say whether it is one
	}
	if s.undecided(r, fmt.Sprintf("the dry run's servers start with %s=%s", name, strings.Join(dedupe(vals), ", ")), s.launchEvidence(with[0])) {
		return true
	}
	r.set(Contradicted, fmt.Sprintf("the servers start with %s=%s, not %s", name, strings.Join(dedupe(vals), ", "), r.Value), s.launchEvidence(with[0]))
	return true
}

type side struct {
	rev     string
	rows    []keyedRow
	images  []recipe.Located
	sources []source
	exists  bool // some listed key exists at this side
	// drivers counts the scripts and recipe files resolved for the keys:
	// without one, an absence proves nothing.
	drivers int
}

type keyedRow struct {
	key  string
	file string
	config.Row
}

// source is a file (or a recipe's block of a master config) by line.
type source struct {
	file  string
	first int // line number of lines[0]
	lines []string
}

func newSubject(ch *recipe.Change, patterns []string, changed []source) *subject {
	s := &subject{ch: ch, changed: changed}
	hk, _ := ch.Head.Keys()
	bk, _ := ch.Base.Keys()
	seen := map[string]bool{}
	for _, p := range patterns {
		re := config.GlobRegexp(p)
		for _, list := range [][]string{hk, bk} {
			for _, k := range list {
				if !seen[k] && re.MatchString(k) {
					seen[k] = true
					s.keys = append(s.keys, k)
				}
			}
		}
	}
	s.head = loadSide(ch.Head, "head", s.keys)
	s.base = loadSide(ch.Base, "base", s.keys)
	return s
}

// changedSources are the head versions of the files the change touched
// outside the master configs and the changelog.
func changedSources(ch *recipe.Change) []source {
	var out []source
	for _, p := range ch.Changed {
		if strings.HasSuffix(p, "-master.yaml") || strings.HasSuffix(p, "perf-changelog.yaml") {
			continue
		}
		if data, ok, err := recipe.ReadFile(ch.Head.Files, p); err == nil && ok && len(data) < 1<<20 {
			out = append(out, source{file: p, first: 1, lines: strings.Split(string(data), "\n")})
		}
	}
	return out
}

func loadSide(r *recipe.Rev, name string, keys []string) side {
	sd := side{rev: name}
	seen := map[string]bool{}
	for _, k := range keys {
		rec, ok, err := r.Recipe(k)
		if err != nil || !ok {
			continue
		}
		sd.exists = true
		for _, row := range config.Rows(rec.Value) {
			sd.rows = append(sd.rows, keyedRow{k, rec.File, row})
		}
		sd.images = append(sd.images, r.Images(k)...)
		if file, text, ok := r.Text(k); ok {
			sd.sources = append(sd.sources, source{file: file, first: rec.Line, lines: strings.Split(string(text), "\n")})
		} else if data, ok, _ := recipe.ReadFile(r.Files, rec.File); ok {
			// the block of the recipe: from its key line to the next top-level key
			all := strings.Split(string(data), "\n")
			end := rec.Line
			for end < len(all) && (all[end] == "" || all[end][0] == ' ' || all[end][0] == '#') {
				end++
			}
			sd.sources = append(sd.sources, source{file: rec.File, first: rec.Line, lines: all[rec.Line-1 : end]})
		}
		all, drivers, err := r.Related(k)
		if err != nil {
			continue
		}
		sd.drivers += len(drivers)
		for _, p := range all {
			if seen[p] || p == rec.File {
				continue
			}
			seen[p] = true
			if data, ok, err := recipe.ReadFile(r.Files, p); err == nil && ok {
				sd.sources = append(sd.sources, source{file: p, first: 1, lines: strings.Split(string(data), "\n")})
			}
		}
	}
	return sd
}

// grep returns the lines of sources matching re.
// needle, when not "", is a string every match contains (a fast filter).
func grep(srcs []source, re *regexp.Regexp, rev, needle string) []Evidence {
	var out []Evidence
	lit := needle
	for _, s := range srcs {
		for i, l := range s.lines {
			if lit != "" && !strings.Contains(l, lit) {
				continue
			}
			if re.MatchString(l) {
				out = append(out, Evidence{File: s.file, Line: s.first + i, Text: strings.TrimSpace(l), Rev: rev})
			}
		}
	}
	return out
}

func (s *subject) check(r *Result) {
	if len(s.keys) == 0 {
		r.Verdict, r.Reason = Unverified, "the entry lists no recipe that exists"
		return
	}
	if !s.head.exists && !s.base.exists {
		r.Verdict, r.Reason = Unverified, "none of the listed recipes exists"
		return
	}
	switch r.Kind {
	case KindImage:
		s.checkImage(r)
	case KindEnv:
		s.checkEnv(r)
	case KindFlag:
		s.checkFlag(r)
	case KindConc:
		s.checkConc(r)
	case KindParallel:
		s.checkParallel(r)
	case KindSeqLen:
		s.checkSeq(r)
	case KindSpec:
		s.checkSpec(r)
	case KindKV:
		s.checkKV(r)
	case KindAppendOnly:
		s.checkAppendOnly(r)
	}
	if r.Verdict == Contradicted && !r.Strong && r.Kind != KindAppendOnly {
		r.Verdict = Unverified // a bare mention is never called wrong
	}
	if len(r.Evidence) > 5 {
		r.Evidence = r.Evidence[:5]
	}
}

func (r *Result) set(verdict, reason string, ev ...Evidence) {
	r.Verdict, r.Reason = verdict, reason
	r.Evidence = append(r.Evidence, ev...)
}

// --- images

// imageMatches reports whether an image reference matches a claimed one
// (a full reference or a bare tag), normalising registries, "v"
// prefixes, digests and abbreviated tags.
func imageMatches(claim, actual string) bool {
	cr, ct, cd := SplitRef(claim)
	ar, at, ad := SplitRef(actual)
	if cr != "" && ar != "" && cr != ar && !strings.HasSuffix(ar, "/"+cr) && !strings.HasSuffix(cr, "/"+ar) {
		return false
	}
	if cd != "" {
		return ad != "" && strings.HasPrefix(ad, cd)
	}
	if ct == "" {
		return cr != "" && ct == "" && cd == ""
	}
	return tagMatches(ct, at)
}

func tagMatches(claim, actual string) bool {
	c, a := strings.ToLower(claim), strings.ToLower(actual)
	if c == a {
		return true
	}
	c, a = strings.TrimPrefix(c, "v"), strings.TrimPrefix(a, "v")
	if c == a || c == "" || a == "" {
		return c == a && c != ""
	}
	if strings.HasPrefix(a, c) {
		next := a[len(c)]
		if next == '-' || next == '.' || next == '_' || next == '+' {
			return true
		}
		// an abbreviated commit hash
		if m := regexp.MustCompile(`[0-9a-f]{7,}$`).FindString(c); m != "" {
			return true
		}
	}
	return false
}

// SplitRef splits an image reference, as image claims read it, into
// repository, tag and digest; a bare tag has no repository.
func SplitRef(ref string) (repo, tag, digest string) {
	ref = strings.Trim(ref, "`'\"")
	ref = strings.Replace(ref, "#", "/", 1) // enroot's registry#image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], strings.TrimPrefix(ref[i+1:], "sha256:")
	}
	if !strings.Contains(ref, "/") {
		return "", ref, digest
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	return normRepo(ref), tag, digest
}

func (s *subject) checkImage(r *Result) {
	want := r.Value
	var hit []Evidence
	for _, im := range s.head.images {
		if imageMatches(want, im.Text) {
			hit = append(hit, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "head"})
		}
	}
	if len(hit) == 0 {
		_, tag, _ := SplitRef(want)
		needle := want
		if tag != "" && !strings.Contains(want, "/") {
			needle = tag
		}
		re := regexp.MustCompile(`(^|[^A-Za-z0-9._-])` + regexp.QuoteMeta(needle) + `($|[^A-Za-z0-9])`)
		hit = grep(s.head.sources, re, "head", needle)
		if len(hit) == 0 {
			hit = grep(s.changed, re, "head", needle)
		}
	}
	if len(hit) > 0 {
		r.set(Confirmed, "the image is "+hit[0].Text, hit[0])
		s.checkFrom(r)
		return
	}
	repo, _, _ := SplitRef(want)
	var same []recipe.Located
	for _, im := range s.head.images {
		ar, _, _ := SplitRef(im.Text)
		if repo == "" || ar == repo || strings.HasSuffix(ar, "/"+repo) || strings.HasSuffix(repo, "/"+ar) || lastSeg(ar) == lastSeg(repo) {
			same = append(same, im)
		}
	}
	if len(same) == 0 || !s.head.exists {
		r.set(Unverified, "no image of the listed recipes is of that repository")
		return
	}
	var ev []Evidence
	var names []string
	for _, im := range same {
		ev = append(ev, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "head"})
		names = append(names, im.Text)
	}
	r.set(Contradicted, fmt.Sprintf("the listed recipes run %s, not %s", strings.Join(dedupe(names), ", "), want), ev...)
	s.addBase(r, func(im string) bool { return true })
}

// checkFrom checks the old image of a "from A to B" claim against base.
func (s *subject) checkFrom(r *Result) {
	if r.From == "" || !s.base.exists || len(s.base.images) == 0 {
		return
	}
	for _, im := range s.base.images {
		if imageMatches(r.From, im.Text) {
			return
		}
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9._-])` + regexp.QuoteMeta(r.From) + `($|[^A-Za-z0-9])`)
	if len(grep(s.base.sources, re, "base", r.From)) > 0 {
		return
	}
	repo, _, _ := SplitRef(r.Value)
	var ev []Evidence
	var names []string
	for _, im := range s.base.images {
		ar, _, _ := SplitRef(im.Text)
		if repo == "" || lastSeg(ar) == lastSeg(repo) {
			ev = append(ev, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "base"})
			names = append(names, im.Text)
		}
	}
	if len(ev) == 0 {
		return
	}
	r.Evidence = r.Evidence[:0]
	r.set(Contradicted, fmt.Sprintf("the image before this change was %s, not %s", strings.Join(dedupe(names), ", "), r.From), ev...)
}

func (s *subject) addBase(r *Result, keep func(string) bool) {
	for _, im := range s.base.images {
		if keep(im.Text) {
			r.Evidence = append(r.Evidence, Evidence{File: im.File, Line: im.Line, Text: im.Text, Rev: "base"})
			return
		}
	}
}

func lastSeg(repo string) string { return repo[strings.LastIndex(repo, "/")+1:] }

// listText joins the distinct items, the first n of them and a count of
// the rest.
// ListText lists names in a message as claims' reasons do: each once, at
// most n of them and then how many more.
func ListText(items []string, n int) string {
	items = dedupe(items)
	if len(items) > n {
		items = append(items[:n:n], fmt.Sprintf("%d more", len(items)-n))
	}
	return strings.Join(items, ", ")
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// --- environment variables

type assignment struct {
	Evidence
	value   string
	literal bool
	// weak: a ${NAME:-default} or a comment, not a setting
	weak bool
}

// assignments finds NAME=VALUE (shell, docker -e, additional-settings),
// NAME: VALUE (YAML environment maps) and ${NAME:-VALUE} defaults. A
// bullet may abbreviate a name (FAST_WARMUP for
// SGLANG_JIT_DEEPGEMM_FAST_WARMUP): names ending in _NAME count.
func assignments(srcs []source, name, rev string) []assignment {
	q := `(?:[A-Z0-9]+_)*` + regexp.QuoteMeta(name)
	re := regexp.MustCompile(`(?:^|[^A-Za-z0-9_])` + q + `(\s*=\s*|:\s+|:-)("[^"]*"|'[^']*'|[^\s"';,}#)]*)`)
	var out []assignment
	for _, s := range srcs {
		for i, l := range s.lines {
			if !strings.Contains(l, name) {
				continue
			}
			code := l
			if j := strings.Index(code, "#"); j >= 0 && (j == 0 || code[j-1] == ' ') {
				code = code[:j]
			}
			for _, m := range re.FindAllStringSubmatch(code, -1) {
				v := strings.Trim(m[2], `"'`)
				out = append(out, assignment{Evidence{File: s.file, Line: s.first + i, Text: strings.TrimSpace(l), Rev: rev}, v, !strings.ContainsAny(v, "$`"), m[1] == ":-"})
			}
		}
	}
	return out
}

func truthy(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off", "":
		return false, true
	}
	return false, false
}

func sameValue(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	x, ok1 := truthy(a)
	y, ok2 := truthy(b)
	return ok1 && ok2 && a != "" && b != "" && x == y
}

func (s *subject) checkEnv(r *Result) {
	if len(r.When) > 0 && s.launchedWhen(r) {
		return
	}
	if s.launchedEnv(r) {
		return
	}
	name := r.Name
	head := assignments(s.head.sources, name, "head")
	if len(head) == 0 {
		head = assignments(s.changed, name, "head")
	}
	mention := regexp.MustCompile(`(^|[^A-Za-z0-9_])(?:[A-Z0-9]+_)*` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	mentioned := grep(s.head.sources, mention, "head", name)
	if len(mentioned) == 0 {
		mentioned = grep(s.changed, mention, "head", name)
	}
	if r.Negated {
		base := assignments(s.base.sources, name, "base")
		set := 0
		for _, a := range head {
			if b, ok := truthy(a.value); !ok || b || r.Value != "" {
				set++
			}
		}
		switch {
		case len(head) == 0:
			r.set(Confirmed, name+" is no longer set by the files that run the recipes")
		case set == 0:
			r.set(Confirmed, name+" is set to a false value", head[0].Evidence)
		case len(base) > 0 && len(head) >= len(base):
			r.set(Contradicted, fmt.Sprintf("%s is still set (%s=%s), as before this change", name, name, head[0].value), head[0].Evidence)
		default:
			r.set(Unverified, name+" is still set in some files", head[0].Evidence)
		}
		return
	}
	if r.Value == "" {
		switch {
		case len(head) > 0:
			r.set(Confirmed, fmt.Sprintf("%s is set (%s=%s)", name, name, head[0].value), head[0].Evidence)
		case len(mentioned) > 0:
			r.set(Confirmed, name+" is used", mentioned[0])
		case s.head.drivers == 0:
			r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
		default:
			r.set(Contradicted, name+" appears in none of the files that run the listed recipes ("+s.filesText()+")")
		}
		return
	}
	var other []assignment
	nonLiteral := false
	for _, a := range head {
		if sameValue(a.value, r.Value) {
			r.set(Confirmed, fmt.Sprintf("%s=%s is set", name, a.value), a.Evidence)
			return
		}
		if !a.literal || a.weak {
			nonLiteral = true
		} else {
			other = append(other, a)
		}
	}
	switch {
	case nonLiteral:
		r.set(Unverified, name+" is set from a variable or has a default only", head[0].Evidence)
	case len(other) > 0:
		var vals []string
		var ev []Evidence
		for _, a := range other {
			vals = append(vals, name+"="+a.value)
			ev = append(ev, a.Evidence)
		}
		r.set(Contradicted, fmt.Sprintf("the files that run the recipes set %s, not %s=%s", strings.Join(dedupe(vals), ", "), name, r.Value), ev...)
		for _, a := range assignments(s.base.sources, name, "base") {
			r.Evidence = append(r.Evidence, a.Evidence)
			break
		}
	case len(mentioned) > 0:
		r.set(Unverified, name+" is read but its value is set elsewhere (the workflow, the environment)", mentioned[0])
	case s.head.drivers == 0:
		r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
	default:
		r.set(Contradicted, fmt.Sprintf("%s is set nowhere in the files that run the listed recipes (%s)", name, s.filesText()))
		if alt := s.sameSetting(name); alt != nil {
			r.Reason += "; they set " + alt.Text + " instead"
			r.Evidence = append(r.Evidence, *alt)
		}
	}
}

// sameSetting finds the setting an environment variable names written
// another way in the head files (VLLM_MINIMAX_M3_MSA_DECODE_BACKEND as an
// engine option minimax_m3_msa_decode_backend): the usual reason a bullet
// naming the variable is wrong.
func (s *subject) sameSetting(name string) *Evidence {
	key := strings.ToLower(name)
	for _, p := range []string{"vllm_", "sglang_", "sgl_", "trtllm_", "atom_", "aiter_"} {
		key = strings.TrimPrefix(key, p)
	}
	if len(key) < 8 || !strings.Contains(key, "_") {
		return nil
	}
	re := regexp.MustCompile(`[A-Za-z0-9_.-]*` + regexp.QuoteMeta(key) + `[A-Za-z0-9_.-]*(?:["']?\s*[:= ]\s*["']?[A-Za-z0-9_.-]+)?`)
	for _, e := range grep(s.head.sources, re, "head", key) {
		e.Text = quotedMatch(e.Text, re)
		return &e
	}
	return nil
}

// quotedMatch is re's first match in line, widened by a quote on either
// side when the match holds that quote: a JSON option reads
// "name": "value", not name": "value.
func quotedMatch(line string, re *regexp.Regexp) string {
	loc := re.FindStringIndex(line)
	if loc == nil {
		return ""
	}
	lo, hi := loc[0], loc[1]
	for _, q := range []byte{'"', '\''} {
		if strings.IndexByte(line[loc[0]:loc[1]], q) < 0 {
			continue
		}
		if lo > 0 && line[lo-1] == q {
			lo--
		}
		if hi < len(line) && line[hi] == q {
			hi++
		}
	}
	return line[lo:hi]
}

func (s *subject) filesText() string {
	var fs []string
	for _, src := range s.head.sources {
		fs = append(fs, src.file)
	}
	return ListText(fs, 4)
}

// --- engine flags

// flagOccurrences finds a flag as --name (shell, argument lists) or as a
// name: / name_with_underscores: key (srt-slurm and engine YAML configs).
func flagOccurrences(srcs []source, flag, rev string, comments bool) []assignment {
	name := strings.TrimPrefix(flag, "--")
	us := strings.ReplaceAll(name, "-", "_")
	re := regexp.MustCompile(`(?:(?:^|[^A-Za-z0-9_-]|:-)--` + regexp.QuoteMeta(name) + `(?:[= ]+("[^"]*"|'[^']*'|[^\s"'\\;)\]}]+))?(?:$|[^A-Za-z0-9_.-])|(?:^|[\s{,"'])(?:` + regexp.QuoteMeta(name) + `|` + regexp.QuoteMeta(us) + `)["']?\s*:\s*("[^"]*"|'[^']*'|[^\s,}#]*))`)
	var out []assignment
	for _, s := range srcs {
		for i, l := range s.lines {
			if !strings.Contains(l, name) && !strings.Contains(l, us) {
				continue
			}
			code := strings.TrimSpace(l)
			if !comments && strings.HasPrefix(code, "#") {
				continue
			}
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				v := m[1]
				if v == "" {
					v = m[2]
				}
				v = strings.Trim(v, `"'`)
				if strings.HasPrefix(v, "-") {
					v = ""
				}
				v = strings.TrimRight(v, ",.;")
				out = append(out, assignment{Evidence{File: s.file, Line: s.first + i, Text: code, Rev: rev}, v, !strings.ContainsAny(v, "$`{["), strings.HasPrefix(code, "#")})
			}
		}
	}
	return out
}

func (s *subject) checkFlag(r *Result) {
	if len(r.When) > 0 && s.launchedWhen(r) {
		return
	}
	if s.launchedFlag(r) {
		return
	}
	head := flagOccurrences(s.head.sources, r.Name, "head", !r.Negated)
	if len(head) == 0 {
		head = flagOccurrences(s.changed, r.Name, "head", !r.Negated)
	}
	if r.Negated {
		base := flagOccurrences(s.base.sources, r.Name, "base", false)
		switch {
		case len(head) == 0:
			r.set(Confirmed, r.Name+" is passed by none of the files that run the recipes")
		case len(base) > 0 && len(head) >= len(base):
			r.set(Contradicted, r.Name+" is still passed, as before this change", head[0].Evidence)
		default:
			r.set(Unverified, r.Name+" is still passed in some files", head[0].Evidence)
		}
		return
	}
	if len(head) == 0 && s.head.drivers == 0 {
		r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
		return
	}
	if len(head) == 0 {
		r.set(Contradicted, fmt.Sprintf("%s is passed by none of the files that run the listed recipes (%s)", r.Name, s.filesText()))
		if alt := s.similarEnv(r.Name); alt != nil {
			r.Reason += "; they set " + alt.Text + " instead"
			r.Evidence = append(r.Evidence, *alt)
		}
		return
	}
	if r.Value == "" || strings.ContainsAny(r.Value, "=:{[") {
		r.set(Confirmed, r.Name+" is passed", head[0].Evidence)
		return
	}
	var ev []Evidence
	var vals []string
	for _, a := range head {
		if a.weak {
			continue // a comment
		}
		if a.value == "" || !a.literal || sameValue(a.value, r.Value) || strings.EqualFold(strings.Trim(a.value, `"'`), r.Value) {
			if a.value != "" && a.literal {
				r.set(Confirmed, fmt.Sprintf("%s %s is passed", r.Name, a.value), a.Evidence)
				return
			}
			r.set(Confirmed, r.Name+" is passed (its value is not literal)", a.Evidence)
			return
		}
		ev = append(ev, a.Evidence)
		vals = append(vals, a.value)
	}
	if len(ev) == 0 {
		r.set(Confirmed, r.Name+" is mentioned", head[0].Evidence)
		return
	}
	r.set(Contradicted, fmt.Sprintf("%s is passed with %s, not %s", r.Name, strings.Join(dedupe(vals), ", "), r.Value), ev...)
}

// similarEnv finds an environment variable set in the head files whose
// name shares the flag's words (--disable-radix-cache vs
// SGLANG_ENABLE_UNIFIED_RADIX_TREE=1): the usual reason a copied bullet
// is wrong.
func (s *subject) similarEnv(flag string) *Evidence {
	words := strings.Split(strings.TrimPrefix(flag, "--"), "-")
	var key []string
	for _, w := range words {
		if len(w) >= 4 && w != "enable" && w != "disable" {
			key = append(key, strings.ToUpper(w))
		}
	}
	if len(key) == 0 {
		return nil
	}
	re := regexp.MustCompile(`\b[A-Z][A-Z0-9_]*` + regexp.QuoteMeta(key[0]) + `[A-Z0-9_]*=\S+`)
	for _, e := range grep(s.head.sources, re, "head", key[0]) {
		e.Text = re.FindString(e.Text)
		return &e
	}
	return nil
}

// --- search space

func (q *RowQual) match(r config.Row) bool {
	if q == nil {
		return true
	}
	if len(q.TP) > 0 {
		ok := false
		for _, n := range q.TP {
			ok = ok || r.HasTP(n)
		}
		if !ok {
			return false
		}
	}
	if len(q.EP) > 0 {
		ok := false
		for _, n := range q.EP {
			ok = ok || r.HasEP(n) || (n == 1 && len(r.EP) == 0)
		}
		if !ok {
			return false
		}
	}
	if q.DPA != nil && !r.HasDPA(*q.DPA) {
		return false
	}
	if q.KV != nil && *q.KV != (r.KVOffloading != "" && r.KVOffloading != "none") {
		return false
	}
	if len(q.Seq) > 0 && r.ISL != 0 {
		ok := false
		for _, sq := range q.Seq {
			isl, osl, _ := strings.Cut(sq, "/")
			ok = ok || (fmt.Sprint(r.ISL) == isl && (osl == "" || fmt.Sprint(r.OSL) == osl))
		}
		if !ok {
			return false
		}
	}
	return true
}

func rowText(r keyedRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", r.key)
	if r.ISL != 0 {
		fmt.Fprintf(&b, " %d/%d", r.ISL, r.OSL)
	}
	fmt.Fprintf(&b, " tp=%v", ints(r.TP))
	if len(r.EP) > 0 {
		fmt.Fprintf(&b, " ep=%v", ints(r.EP))
	}
	if len(r.DPA) > 0 {
		fmt.Fprintf(&b, " dp-attn=%v", r.DPA)
	}
	fmt.Fprintf(&b, " conc=%v", ints(r.Conc))
	return b.String()
}

func ints(v []int64) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	if len(s) == 1 {
		return s[0]
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (s *subject) rowEvidence(rows []keyedRow, rev string) []Evidence {
	var ev []Evidence
	for _, r := range rows {
		ev = append(ev, Evidence{File: r.file, Line: r.Line, Text: rowText(r), Rev: rev})
	}
	return ev
}

func (s *subject) checkConc(r *Result) {
	rows := s.head.rows
	if len(rows) == 0 {
		r.set(Unverified, "the listed recipes have no search space at head")
		return
	}
	if len(r.Variants) > 0 && len(r.Conc) > 0 {
		s.checkConcVariants(r)
		return
	}
	var match []keyedRow
	for _, row := range rows {
		if matchAny(r.Rows, row.Row) {
			match = append(match, row)
		}
	}
	qual := ""
	if len(r.Rows) > 0 {
		qual = " in the rows it is paired with (" + altText(r.Rows) + ")"
	}
	if len(match) == 0 {
		r.set(Unverified, "no search-space row matches "+altText(r.Rows))
		return
	}
	union := map[int64]bool{}
	lo, hi := int64(1<<62), int64(0)
	for _, row := range match {
		for _, c := range row.Conc {
			union[c] = true
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	if r.Max > 0 {
		for _, row := range match {
			if len(row.Conc) > 0 && slices.Max(row.Conc) == r.Max {
				r.set(Confirmed, fmt.Sprintf("a row runs up to conc %d", r.Max), s.rowEvidence([]keyedRow{row}, "head")...)
				return
			}
		}
		if hi < r.Max {
			r.set(Contradicted, fmt.Sprintf("no row%s reaches conc %d (they stop at %d)", qual, r.Max, hi), s.rowEvidence(match, "head")...)
		} else {
			r.set(Contradicted, fmt.Sprintf("no row%s stops at conc %d (they run up to %d)", qual, r.Max, hi), s.rowEvidence(match, "head")...)
		}
		return
	}
	if len(r.Range) == 2 {
		a, b := r.Range[0], r.Range[1]
		if row, ok := spans(match, a, b); ok {
			r.set(Confirmed, fmt.Sprintf("a row spans conc %d-%d", a, b), s.rowEvidence([]keyedRow{row}, "head")...)
		} else if union[a] && union[b] {
			r.set(Confirmed, fmt.Sprintf("the rows span conc %d-%d", a, b), s.rowEvidence(match[:1], "head")...)
		} else {
			missing := a
			if union[a] {
				missing = b
			}
			r.set(Contradicted, fmt.Sprintf("no row%s reaches conc %d (they run %d-%d)", qual, missing, lo, hi), s.rowEvidence(match, "head")...)
			return
		}
		if r.From != "" {
			s.checkConcFrom(r)
		}
		return
	}
	var miss []string
	for _, c := range r.Conc {
		if !union[c] {
			miss = append(miss, fmt.Sprint(c))
		}
	}
	if len(miss) == 0 {
		r.set(Confirmed, "the rows run conc "+ints(r.Conc), s.rowEvidence(match[:1], "head")...)
		return
	}
	r.set(Contradicted, fmt.Sprintf("no row%s runs conc %s", qual, strings.Join(miss, ", ")), s.rowEvidence(match, "head")...)
}

// spans finds a row whose concurrencies run from a to b.
func spans(rows []keyedRow, a, b int64) (keyedRow, bool) {
	for _, row := range rows {
		if len(row.Conc) > 0 && slices.Min(row.Conc) == a && slices.Max(row.Conc) == b {
			return row, true
		}
	}
	return keyedRow{}, false
}

// checkConcFrom checks the old range of "conc from 4-64 to 4-256"
// against the base's rows (of the same qualifiers).
func (s *subject) checkConcFrom(r *Result) {
	var a, b int64
	if _, err := fmt.Sscanf(r.From, "%d-%d", &a, &b); err != nil {
		return
	}
	var match []keyedRow
	lo, hi := int64(1<<62), int64(0)
	union := map[int64]bool{}
	for _, row := range s.base.rows {
		if matchAny(r.Rows, row.Row) && len(row.Conc) > 0 {
			match = append(match, row)
			lo, hi = min(lo, slices.Min(row.Conc)), max(hi, slices.Max(row.Conc))
			for _, c := range row.Conc {
				union[c] = true
			}
		}
	}
	if len(match) == 0 {
		return // an added recipe or row: nothing to compare
	}
	if row, ok := spans(match, a, b); ok {
		r.Evidence = append(r.Evidence, s.rowEvidence([]keyedRow{row}, "base")...)
		return
	}
	if union[a] && union[b] {
		return // the rows together ran it
	}
	r.Verdict = Contradicted
	r.Reason = fmt.Sprintf("at base no row ran conc %d-%d (they ran %d-%d)", a, b, lo, hi)
	r.Evidence = append(r.Evidence, s.rowEvidence(match, "base")...)
}

// checkConcVariants checks "conc X across A +/- B": every variant must
// have a row that runs each claimed concurrency.
func (s *subject) checkConcVariants(r *Result) {
	var missing []string
	var seen []keyedRow
	for _, v := range r.Variants {
		var match []keyedRow
		for _, row := range s.head.rows {
			if v.match(row.Row) {
				match = append(match, row)
			}
		}
		seen = append(seen, match...)
		for _, c := range r.Conc {
			runs := false
			for _, row := range match {
				runs = runs || row.HasConc(c)
			}
			if !runs {
				what := v.text()
				if len(match) == 0 {
					what += " (no such row)"
				}
				missing = append(missing, fmt.Sprintf("conc %d in %s", c, what))
			}
		}
	}
	if len(missing) == 0 {
		r.set(Confirmed, fmt.Sprintf("each of the %d variants runs conc %s", len(r.Variants), ints(r.Conc)), s.rowEvidence(seen[:min(1, len(seen))], "head")...)
		return
	}
	var have []keyedRow
	for _, row := range s.head.rows {
		for _, c := range r.Conc {
			if row.HasConc(c) && matchAny(r.Rows, row.Row) {
				have = append(have, row)
				break
			}
		}
	}
	reason := fmt.Sprintf("not every variant runs it: no %s", strings.Join(missing, "; no "))
	if len(have) > 0 {
		reason += fmt.Sprintf(" (only %d row%s run%s it)", len(have), map[bool]string{true: "", false: "s"}[len(have) == 1], map[bool]string{true: "s", false: ""}[len(have) == 1])
	}
	r.set(Contradicted, reason, s.rowEvidence(have, "head")...)
}

func matchAny(alts []RowQual, r config.Row) bool {
	if len(alts) == 0 {
		return true
	}
	for i := range alts {
		if alts[i].match(r) {
			return true
		}
	}
	return false
}

func altText(alts []RowQual) string {
	if len(alts) == 0 {
		return "any row"
	}
	var p []string
	for i := range alts {
		p = append(p, alts[i].text())
	}
	return strings.Join(p, " or ")
}

func (q *RowQual) text() string {
	if q.empty() {
		return "any row"
	}
	var p []string
	if len(q.TP) > 0 {
		p = append(p, "tp "+ints(q.TP))
	}
	if len(q.EP) > 0 {
		p = append(p, "ep "+ints(q.EP))
	}
	if q.DPA != nil {
		p = append(p, fmt.Sprintf("dp-attn %v", *q.DPA))
	}
	if len(q.Seq) > 0 {
		p = append(p, strings.Join(q.Seq, " or "))
	}
	if q.KV != nil {
		p = append(p, map[bool]string{true: "with KV offloading", false: "without KV offloading"}[*q.KV])
	}
	return strings.Join(p, ", ")
}

func (s *subject) checkParallel(r *Result) {
	rows := s.head.rows
	if len(rows) == 0 {
		r.set(Unverified, "the listed recipes have no search space at head")
		return
	}
	for _, row := range rows {
		if r.Row.match(row.Row) {
			r.set(Confirmed, "a row runs "+r.Row.text(), s.rowEvidence([]keyedRow{row}, "head")...)
			return
		}
	}
	r.set(Contradicted, "no search-space row of the listed recipes runs "+r.Row.text(), s.rowEvidence(rows[:min(3, len(rows))], "head")...)
}

func (s *subject) checkSeq(r *Result) {
	var fixed []keyedRow
	for _, row := range s.head.rows {
		if row.ISL != 0 {
			fixed = append(fixed, row)
		}
	}
	if len(fixed) == 0 {
		r.set(Unverified, "the listed recipes have no fixed sequence lengths")
		return
	}
	q := &RowQual{Seq: []string{r.Value}}
	var have []string
	for _, row := range fixed {
		if q.match(row.Row) {
			r.set(Confirmed, fmt.Sprintf("a row runs isl %d / osl %d", row.ISL, row.OSL), s.rowEvidence([]keyedRow{row}, "head")...)
			return
		}
		have = append(have, fmt.Sprintf("%d/%d", row.ISL, row.OSL))
	}
	r.set(Contradicted, fmt.Sprintf("the listed recipes run %s, not %s", strings.Join(dedupe(have), ", "), r.Value), s.rowEvidence(fixed[:1], "head")...)
}

var reSpecText = regexp.MustCompile(`(?i)speculative|eagle|\bmtp\b|nextn|draft`)

func (s *subject) checkSpec(r *Result) {
	var specRows, plainRows []keyedRow
	for _, row := range s.head.rows {
		if row.Spec != "" && row.Spec != "none" {
			specRows = append(specRows, row)
		} else {
			plainRows = append(plainRows, row)
		}
	}
	keyed := false
	for _, k := range s.keys {
		keyed = keyed || strings.Contains(k, "mtp") || strings.Contains(k, "eagle")
	}
	if r.Negated {
		if len(plainRows) > 0 || len(s.head.rows) == 0 {
			r.set(Confirmed, "rows without speculative decoding exist")
			return
		}
		r.set(Contradicted, "every row of the listed recipes uses spec-decoding "+specRows[0].Spec, s.rowEvidence(specRows[:1], "head")...)
		return
	}
	if len(specRows) > 0 {
		r.set(Confirmed, "rows use spec-decoding "+specRows[0].Spec, s.rowEvidence(specRows[:1], "head")...)
		return
	}
	if keyed {
		r.set(Confirmed, "the recipe key names speculative decoding")
		return
	}
	if ev := grep(s.head.sources, reSpecText, "head", ""); len(ev) > 0 {
		r.set(Confirmed, "the files that run the recipes configure speculative decoding", ev[0])
		return
	}
	r.set(Contradicted, "no row uses spec-decoding and no file that runs the listed recipes configures speculative decoding")
}

func (s *subject) checkKV(r *Result) {
	name := r.Name
	if name == "radix cache" {
		fl := flagOccurrences(s.head.sources, "--disable-radix-cache", "head", false)
		if r.Negated { // disable the radix cache
			if len(fl) > 0 {
				r.set(Confirmed, "--disable-radix-cache is passed", fl[0].Evidence)
				return
			}
			r.set(Contradicted, "--disable-radix-cache is passed by none of the files that run the listed recipes")
			if alt := s.similarEnv("--radix-tree"); alt != nil {
				r.Reason += "; they set " + alt.Text + " instead"
				r.Evidence = append(r.Evidence, *alt)
			}
			return
		}
		if len(fl) > 0 {
			r.set(Unverified, "--disable-radix-cache is passed somewhere", fl[0].Evidence)
			return
		}
		r.set(Confirmed, "the radix cache is not disabled")
		return
	}
	pat := map[string]string{"hicache": `(?i)hicache|hierarchical[-_ ]cache`, "lmcache": `(?i)lmcache`, "mooncake": `(?i)mooncake`, "simplecpu": `(?i)simple_?cpu|simple-cpu`}[name]
	if pat == "" {
		r.set(Unverified, "not checked")
		return
	}
	re := regexp.MustCompile(pat)
	for _, row := range s.head.rows {
		if re.MatchString(row.KVBackend) {
			if r.Negated {
				r.set(Unverified, "rows still use "+row.KVBackend, s.rowEvidence([]keyedRow{row}, "head")...)
				return
			}
			r.set(Confirmed, "rows use kv-offload-backend "+row.KVBackend, s.rowEvidence([]keyedRow{row}, "head")...)
			return
		}
	}
	ev := grep(s.head.sources, re, "head", "")
	if len(ev) == 0 {
		ev = grep(s.changed, re, "head", "")
	}
	switch {
	case r.Negated && len(ev) == 0:
		r.set(Confirmed, name+" is not used")
	case r.Negated:
		r.set(Unverified, name+" is still mentioned", ev[0])
	case len(ev) > 0:
		r.set(Confirmed, name+" is configured", ev[0])
	case s.head.drivers == 0:
		r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
	default:
		r.set(Contradicted, name+" appears in no row and no file that runs the listed recipes ("+s.filesText()+")")
	}
}

func (s *subject) checkAppendOnly(r *Result) {
	head, herr := s.ch.Head.Master()
	if herr != nil {
		r.set(Unverified, "the head master configs do not load")
		return
	}
	base, berr := s.ch.Base.Master()
	sel := map[string]map[string]bool{}
	for _, k := range s.keys {
		sel[k] = map[string]bool{}
		for _, t := range config.ScenarioTypes {
			sel[k][t] = true
		}
	}
	keys := append([]string(nil), s.keys...)
	sort.Strings(keys)
	if err := config.AppendOnlyCheck(base, berr, head, keys, sel); err != nil {
		r.set(Contradicted, err.Error())
		return
	}
	r.set(Confirmed, "every base search-space point is still generated and points were added")
}
