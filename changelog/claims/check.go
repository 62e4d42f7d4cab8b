package claims

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// Claim verdicts (JSON contract).
const (
	Confirmed    = "confirmed"
	Contradicted = "contradicted"
	Unverified   = "unverified"
)

// notAClaim marks a candidate the checker found to be no claim (a word of
// prose read as an option name that no launch has); it is never output.
const notAClaim = "-"

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
// Asserts reports whether the claim can be contradicted: a bare mention
// in a story or a counterfactual ("X is only read from v0.5.16, so an
// older image would ignore it") is confirmed when the files have it and
// unverified otherwise, never contradicted.
func (c Claim) Asserts() bool { return c.Strong || c.mention || c.Kind == KindAppendOnly }

// Switch says whether the claim names a feature in English ("EPLB",
// "CUDA graphs disabled"), read as the option that switches it (Name).
func (c Claim) Switch() bool { return c.feature != nil }

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
	// the options the scripts pass on either side: the vocabulary of
	// option names a bullet writes without dashes
	vocabulary := sync.OnceValue(func() [2]map[string]bool { return [2]map[string]bool{ch.Head.Options(), ch.Base.Options()} })
	options := func(w string) bool { v := vocabulary(); return v[0][w] || v[1][w] }
	// what the claims of entries that list the same recipes are checked
	// against, read once
	subjectOf := func(patterns []string) *subject {
		id := strings.Join(patterns, "\x00")
		subj := subjects[id]
		if subj == nil {
			subj = newSubject(ch, patterns, changed())
			subj.launched, subj.commands, subj.points = launchedServers(subj.keys, effects)
			if subj.launched != nil {
				for _, k := range subj.keys {
					subj.effects = append(subj.effects, effects[k])
				}
			}
			subjects[id] = subj
		}
		return subj
	}
	for _, e := range entries {
		if ctx != nil && ctx.Err() != nil {
			break
		}
		if e.Bullets == nil {
			continue
		}
		claims := ExtractIn(e.Bullets, options)
		if e.AppendOnly {
			claims = append(claims, Claim{Kind: KindAppendOnly, Text: "append-only: true", Strong: true, Bullet: -1})
		}
		if len(claims) == 0 {
			continue
		}
		all := subjectOf(e.Keys)
		for i := range claims {
			if claims[i].every {
				for j, o := range claims {
					if j != i && o.Kind == KindConc {
						claims[i].others = append(claims[i].others, o)
					}
				}
			}
		}
		for _, c := range claims {
			subj := all
			if c.Bullet >= 0 && c.Bullet < len(e.Bullets) {
				if named := namedKeys(e.Bullets[c.Bullet], all.keys); named != nil {
					subj = subjectOf(named) // "glm5-fp4-b200-sglang-mtp: override ...": that recipe only
				}
			}
			r := Result{Claim: c, Entry: e.Index, Keys: subj.keys, Line: e.LineOf(c.Bullet)}
			subj.check(&r)
			if r.Verdict == notAClaim {
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

// Unchecked lists the claims of entries as unverified for reason: what
// a caller says when the change they were written for cannot be read (a
// shallow clone's boundary commit, whose parent is not there). A claim
// that was not checked is said, never left out.
func Unchecked(entries []Entry, reason string) []Result {
	var out []Result
	for _, e := range entries {
		if e.Bullets == nil {
			continue
		}
		for _, c := range Extract(e.Bullets) {
			out = append(out, Result{Claim: c, Entry: e.Index, Keys: e.Keys, Line: e.LineOf(c.Bullet), Verdict: Unverified, Reason: reason})
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
	launched, commands []*dryrun.Command
	points             []launchedPoint
	// effects are the listed recipes' effects when each was dry-run
	// completely (nil otherwise).
	effects []*recipe.Effect
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
		if data, ok, err := revfs.ReadFile(ch.Head.Files, p); err == nil && ok && len(data) < 1<<20 {
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
		for _, row := range rec.Rows() {
			sd.rows = append(sd.rows, keyedRow{k, rec.File, row})
		}
		sd.images = append(sd.images, r.Images(k)...)
		if file, text, ok := r.Text(k); ok {
			sd.sources = append(sd.sources, source{file: file, first: rec.Line, lines: strings.Split(string(text), "\n")})
		} else if data, ok, _ := revfs.ReadFile(r.Files, rec.File); ok {
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
			if data, ok, err := revfs.ReadFile(r.Files, p); err == nil && ok {
				sd.sources = append(sd.sources, source{file: p, first: 1, lines: strings.Split(string(data), "\n")})
			}
		}
	}
	return sd
}

// grep returns the lines of sources whose code (a line without its
// comment) matches re: a name in a comment is not what runs.
// needle, when not "", is a string every match contains (a fast filter).
func grep(srcs []source, re *regexp.Regexp, rev, needle string) []Evidence {
	var out []Evidence
	lit := needle
	for _, s := range srcs {
		for i, l := range s.lines {
			if lit != "" && !strings.Contains(l, lit) {
				continue
			}
			if re.MatchString(recipe.CodeOf(l)) {
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
	if r.Verdict == Contradicted && !r.Strong && !r.firm && r.Kind != KindAppendOnly {
		r.Verdict = Unverified // a bare mention is never called wrong
	}
	if len(r.Evidence) > 5 {
		r.Evidence = r.Evidence[:5]
	}
}

// namedKeys are the recipes of keys a bullet names as whole words
// ("glm5-fp4-b200-sglang-mtp: ..." names the MTP recipe, not
// glm5-fp4-b200-sglang); nil when it names none or all of them.
func namedKeys(bullet string, keys []string) []string {
	var out []string
	for _, k := range keys {
		for i := 0; ; {
			j := strings.Index(bullet[i:], k)
			if j < 0 {
				break
			}
			j += i
			end := j + len(k)
			if (j == 0 || !isKeyByte(bullet[j-1])) && (end == len(bullet) || !isKeyByte(bullet[end])) {
				out = append(out, k)
				break
			}
			i = j + 1
		}
	}
	if len(out) == len(keys) {
		return nil
	}
	return out
}

func isKeyByte(b byte) bool {
	return b == '-' || b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

func (r *Result) set(verdict, reason string, ev ...Evidence) {
	r.Verdict, r.Reason = verdict, reason
	r.Evidence = append(r.Evidence, ev...)
}
