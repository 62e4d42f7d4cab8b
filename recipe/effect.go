package recipe

import (
	"context"
	"encoding/json"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/recipe/dryrun"
)

// Effect is what a change did to the launches of one recipe: its points
// dry-run at base and at head, matched by their identity.
type Effect struct {
	Key string
	// OldKey is the recipe's key at base when the change renamed it.
	OldKey string
	// Base and Head are the recipe's points at each revision (Base is
	// empty for an added recipe; for a renamed one, the old key's points,
	// keyed as the new).
	Base, Head []PointLaunch
	// Complete says every point of both revisions was dry-run to an end
	// (a launch or a failure, nothing unknown): the comparison is the
	// recipe's whole effect. Otherwise the files touched decide.
	Complete bool
	// Changed says a point was added or removed, or a matched point
	// launches something else (its server's options other than where it
	// listens, the variables, the files, whether it starts; not its
	// benchmark client's options).
	Changed bool
	// Diffs are the differences of the matched points' launches.
	Diffs []LaunchDiff
	// Files are the changed files on the recipe's launch path.
	Files []string
}

// LaunchDiff is one difference between the launches of matched points.
type LaunchDiff struct {
	// Kind is "flag" (a server or router option), "env" (a variable the
	// launch path sets), "file" (a setting of a config file the server is
	// given: Name is its key, In the file), "client" (a benchmark client
	// option) or "status".
	Kind string
	Name string
	In   string
	// Base and Head are the values at each side ("" for an option
	// without value); Absent marks a side where it is not there at all.
	Base, Head             string
	BaseAbsent, HeadAbsent bool
	// At is the head launch's file:line (the base's when the head has
	// no server).
	At string
	// Points are the head points it reaches (their Index).
	Points []int
	// Follows marks a variable whose value at each side is the point's
	// own concurrency list (BENCH_MAX_CONCURRENCY=1x2x4 of a multi-node
	// row with conc [1, 2, 4]): the search space says it.
	Follows bool `json:",omitempty"`
}

// String renders a difference the way bullets and messages say it:
// "--num-continuous-decode-steps 4 -> 8", "SGLANG_X=1 added".
func (d LaunchDiff) String() string {
	name := d.Name
	val := func(v string) string {
		if d.Kind == "env" {
			return name + "=" + v
		}
		if v == "" {
			return name
		}
		return name + " " + v
	}
	if d.Kind == "file" {
		in := " (" + d.In + ")"
		switch {
		case d.BaseAbsent:
			return name + ": " + d.Head + " added" + in
		case d.HeadAbsent:
			return name + ": " + d.Base + " removed" + in
		}
		return name + ": " + d.Base + " -> " + d.Head + in
	}
	if d.Kind == "client" {
		name = "client " + name
	}
	switch {
	case d.BaseAbsent:
		return val(d.Head) + " added"
	case d.HeadAbsent:
		return val(d.Base) + " removed"
	case d.Kind == "env":
		return name + ": " + d.Base + " -> " + d.Head
	case d.Kind == "status":
		return "status " + d.Base + " -> " + d.Head
	}
	return name + " " + d.Base + " -> " + d.Head
}

// LaunchCandidates lists the head recipes whose launch the change may
// have changed: those it changed (config or driver script) and the
// single-node recipes with a changed launcher, or a changed file they
// source, on their launch path.
func (c *Change) LaunchCandidates() (keys []string, files map[string][]string, err error) {
	changes, err := c.Recipes()
	if err != nil {
		return nil, nil, err
	}
	files = map[string][]string{}
	seen := map[string]bool{}
	for _, rc := range changes {
		if rc.Kind == RecipeRemoved || seen[rc.Key] {
			continue
		}
		seen[rc.Key] = true
		keys = append(keys, rc.Key)
		files[rc.Key] = append(files[rc.Key], rc.Files...)
	}
	// the changed shell files that are not the driver of a changed
	// recipe: launchers, sourced helpers (each costs a look at every
	// recipe's launch path)
	drivers := map[string]bool{}
	for _, rc := range changes {
		for _, f := range rc.Files {
			drivers[f] = true
		}
	}
	var shell []string
	for _, p := range c.Changed {
		if strings.HasSuffix(p, ".sh") && (strings.HasPrefix(p, "runners/") || strings.HasPrefix(p, "benchmarks/")) && !drivers[p] {
			shell = append(shell, p)
		}
	}
	if len(shell) == 0 {
		return keys, files, nil
	}
	headKeys, err := c.Head.Keys()
	if err != nil {
		return nil, nil, err
	}
	for _, k := range headKeys {
		all, drivers, err := c.Head.Related(k)
		if err != nil {
			return nil, nil, err
		}
		var hit []string
		for _, p := range shell {
			if slices.Contains(all, p) && !slices.Contains(drivers, p) {
				hit = append(hit, p)
			}
		}
		if len(hit) == 0 {
			continue
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		files[k] = append(files[k], hit...)
	}
	return keys, files, nil
}

// Effects dry-runs the candidates' points at base and head and compares
// them. Multi-node recipes (not dry-run) get an incomplete Effect.
func (c *Change) Effects(ctx context.Context, o dryrun.Options) ([]Effect, error) {
	keys, files, err := c.LaunchCandidates()
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	head, err := c.Head.DryRunKeys(ctx, keys, 0, o)
	if err != nil {
		return nil, err
	}
	// a renamed recipe's launch is compared with its old key's
	changes, err := c.Recipes()
	if err != nil {
		return nil, err
	}
	oldKey, newKey := map[string]string{}, map[string]string{}
	for _, rc := range changes {
		if rc.Kind == RecipeRenamed {
			oldKey[rc.Key], newKey[rc.OldKey] = rc.OldKey, rc.Key
		}
	}
	baseKeys := make([]string, 0, len(keys))
	for _, k := range keys {
		if old, ok := oldKey[k]; ok {
			k = old
		}
		if _, ok, _ := c.Base.Recipe(k); ok {
			baseKeys = append(baseKeys, k)
		}
	}
	var base []PointLaunch
	if len(baseKeys) > 0 {
		if base, err = c.Base.DryRunKeys(ctx, baseKeys, 0, o); err != nil {
			return nil, err
		}
		for i := range base {
			if k, ok := newKey[base[i].Point.Key]; ok {
				base[i].Point.Key = k
			}
		}
	}
	byKey := func(pls []PointLaunch) map[string][]PointLaunch {
		m := map[string][]PointLaunch{}
		for _, pl := range pls {
			m[pl.Point.Key] = append(m[pl.Point.Key], pl)
		}
		return m
	}
	hb, bb := byKey(head), byKey(base)
	out := make([]Effect, 0, len(keys))
	for _, k := range keys {
		e := Effect{Key: k, OldKey: oldKey[k], Base: bb[k], Head: hb[k], Files: files[k]}
		e.compare()
		out = append(out, e)
	}
	return out, nil
}

// HeadEffects is the head side of Effects for those of keys the change
// may have changed (LaunchCandidates): their points dry-run at head, Base
// left empty and Changed and Diffs unset. What a claim about a recipe is
// judged by, at half the cost and without the comparison.
func (c *Change) HeadEffects(ctx context.Context, keys []string, o dryrun.Options) ([]Effect, error) {
	cands, files, err := c.LaunchCandidates()
	if err != nil {
		return nil, err
	}
	cands = slices.DeleteFunc(cands, func(k string) bool { return !slices.Contains(keys, k) })
	if len(cands) == 0 {
		return nil, nil
	}
	head, err := c.Head.DryRunKeys(ctx, cands, 0, o)
	if err != nil {
		return nil, err
	}
	out := make([]Effect, 0, len(cands))
	for _, k := range cands {
		e := Effect{Key: k, Files: files[k]}
		for _, pl := range head {
			if pl.Point.Key == k {
				e.Head = append(e.Head, pl)
			}
		}
		e.Complete = len(e.Head) > 0 && ended(e.Head)
		out = append(out, e)
	}
	return out, nil
}

// ended reports whether every point was dry-run to an end: a launch, a
// failure or a description, nothing unknown.
func ended(pls []PointLaunch) bool {
	for _, pl := range pls {
		if pl.Launch == nil || (pl.Launch.Status != dryrun.StatusLaunched && pl.Launch.Status != dryrun.StatusFailed && pl.Launch.Status != dryrun.StatusDescribed) {
			return false
		}
	}
	return true
}

// Matched counts the head points that have a base point of their
// identity, both with a launch: the points Diffs compare. A change every
// one of them shares is the recipe's change, whatever points the change
// also added.
func (e *Effect) Matched() int {
	base := map[string]bool{}
	for i := range e.Base {
		if e.Base[i].Launch != nil {
			base[e.Base[i].Point.ID()] = true
		}
	}
	n := 0
	for i := range e.Head {
		if e.Head[i].Launch != nil && base[e.Head[i].Point.ID()] {
			n++
		}
	}
	return n
}

// Added lists the head points with a launch that no base point matches
// (the points the change added), by Index, and of them those that launch
// what the points of d launch at head for d's setting: a bullet that
// states d of the recipe holds of these new points too.
func (e *Effect) Added(d LaunchDiff) (added, agreeing map[int]bool) {
	base := map[string]bool{}
	for i := range e.Base {
		base[e.Base[i].Point.ID()] = true
	}
	var ref *PointLaunch
	for i := range e.Head {
		if len(d.Points) > 0 && e.Head[i].Point.Index == d.Points[0] {
			ref = &e.Head[i]
		}
	}
	added, agreeing = map[int]bool{}, map[int]bool{}
	for i := range e.Head {
		h := &e.Head[i]
		if h.Launch == nil || base[h.Point.ID()] {
			continue
		}
		added[h.Point.Index] = true
		if ref == nil {
			continue
		}
		same := true
		for _, x := range diffLaunches(ref, h) {
			// (in any role: a claim names the setting, not the worker)
			if x.Kind == d.Kind && x.Name == d.Name && (x.In == d.In || x.Kind == "flag") {
				same = false
			}
		}
		if same {
			agreeing[h.Point.Index] = true
		}
	}
	return added, agreeing
}

// Scenarios are the scenarios of the points the change reached: those
// whose launch differs (Diffs), and those only one side has.
func (e *Effect) Scenarios() map[string]bool {
	out := map[string]bool{}
	reached := map[int]bool{}
	for _, d := range e.Diffs {
		for _, i := range d.Points {
			reached[i] = true
		}
	}
	ids := func(pls []PointLaunch) map[string]bool {
		m := map[string]bool{}
		for i := range pls {
			m[pls[i].Point.ID()] = true
		}
		return m
	}
	base, head := ids(e.Base), ids(e.Head)
	for i := range e.Head {
		if p := &e.Head[i].Point; reached[p.Index] || !base[p.ID()] {
			out[p.Scenario] = true
		}
	}
	for i := range e.Base {
		if p := &e.Base[i].Point; !head[p.ID()] {
			out[p.Scenario] = true
		}
	}
	return out
}

// compare matches the points by their identity (LaunchPoint.ID) and
// diffs their launches.
func (e *Effect) compare() {
	e.Complete = len(e.Head) > 0 && ended(e.Base) && ended(e.Head)
	base := map[string]*PointLaunch{}
	for i := range e.Base {
		base[e.Base[i].Point.ID()] = &e.Base[i]
	}
	if len(e.Base) != len(e.Head) {
		e.Changed = true
	}
	agg := map[string]*LaunchDiff{}
	var order []string
	for i := range e.Head {
		h := &e.Head[i]
		b, ok := base[h.Point.ID()]
		if !ok {
			e.Changed = true
			continue
		}
		for _, d := range diffLaunches(b, h) {
			if !d.Harness() {
				e.Changed = true
			}
			id := d.Kind + "\x00" + d.Name + "\x00" + d.Base + "\x00" + d.Head
			if a, ok := agg[id]; ok {
				a.Points = append(a.Points, h.Point.Index)
				continue
			}
			d.Points = []int{h.Point.Index}
			agg[id] = &d
			order = append(order, id)
		}
	}
	for _, id := range order {
		e.Diffs = append(e.Diffs, *agg[id])
	}
}

// diffLaunches lists what differs between a point's base and head
// launches: the status, the server's and routers' options, the variables
// the launch path sets, the files the server is given, the client's
// options.
func diffLaunches(b, h *PointLaunch) []LaunchDiff {
	bl, hl := b.Launch, h.Launch
	if bl == nil || hl == nil {
		return nil
	}
	var out []LaunchDiff
	at := ""
	if s := hl.Server(); s != nil {
		at = s.At
	} else if s := bl.Server(); s != nil {
		at = s.At
	}
	if bl.Status != hl.Status {
		if hl.Status != dryrun.StatusLaunched && hl.EndedAt != "" {
			at = hl.EndedAt
		}
		out = append(out, LaunchDiff{Kind: "status", Name: "status", Base: bl.Status, Head: hl.Status, At: at})
		if !bl.Started() || !hl.Started() {
			return out // what a run that did not launch lacks is not a change of the launch
		}
	}
	cmds := func(l *dryrun.Launch) []dryrun.Command {
		return append(append([]dryrun.Command(nil), l.Servers...), l.Routers...)
	}
	out = append(out, inArgvOrder(diffMaps("flag", flagMap(cmds(bl)), flagMap(cmds(hl)), at), cmds(hl), cmds(bl))...)
	for _, d := range diffMaps("env", envMap(bl, b.Point.Env), envMap(hl, h.Point.Env), at) {
		d.Follows = !d.BaseAbsent && !d.HeadAbsent && concList(d.Base, b.Point.Env["CONC_LIST"]) && concList(d.Head, h.Point.Env["CONC_LIST"])
		out = append(out, d)
	}
	bf, hf := fileMap(bl), fileMap(hl)
	for _, d := range diffMaps("file", bf, hf, at) {
		// a config file: its settings ("key: value" lines) that differ
		sub := diffMaps("file", settingsOf(bf[d.Name]), settingsOf(hf[d.Name]), at)
		if len(sub) == 0 {
			sub = []LaunchDiff{{Kind: "file", Name: "content", Base: "…", Head: "…", At: at}}
		}
		for i := range sub {
			sub[i].In = d.Name
		}
		out = append(out, sub...)
	}
	out = append(out, inArgvOrder(diffMaps("client", flagMap(bl.Clients), flagMap(hl.Clients), at), hl.Clients, bl.Clients)...)
	return out
}

// inArgvOrder orders option differences as the head command lines write
// them (then the base's, for removed options): a bullet list reads like
// the command.
func inArgvOrder(ds []LaunchDiff, head, base []dryrun.Command) []LaunchDiff {
	pos := map[string]int{}
	for _, cs := range [][]dryrun.Command{head, base} {
		for i := range cs {
			for _, f := range cs[i].Flags {
				if n := flagName(&cs[i], f.Name); pos[n] == 0 {
					pos[n] = len(pos) + 1
				}
			}
		}
	}
	sort.SliceStable(ds, func(i, j int) bool { return pos[ds[i].Name] < pos[ds[j].Name] })
	return ds
}

// Harness reports whether a difference is the harness's, not the
// recipe's: the benchmark client's options and where the server listens
// are a difference, but not a change of what the recipe benchmarks.
func (d LaunchDiff) Harness() bool {
	name := d.Name
	if i := strings.LastIndex(name, " "); i >= 0 {
		name = name[i+1:] // "decode --port"
	}
	return d.Kind == "client" || d.Follows || (d.Kind == "flag" && infraOption.MatchString(name))
}

// concList says whether v is the concurrency list list (CONC_LIST, space
// separated) written with any one separator ("1x2x4", "1,2,4", "1 2 4").
func concList(v, list string) bool {
	want := strings.Fields(list)
	if len(want) < 2 {
		return false // one value: a coincidence as likely as a rule
	}
	for _, sep := range []string{"x", ",", " "} {
		if strings.Join(want, sep) == v {
			return true
		}
	}
	return false
}

// Respelled reports whether a difference is one value written two ways:
// the same number ("0.9" and "0.90") or a JSON object or array that holds
// the same (a --kv-transfer-config whose keys were reordered). The server
// reads the same setting; what the recipe benchmarks did not change.
func (d LaunchDiff) Respelled() bool {
	return !d.BaseAbsent && !d.HeadAbsent && (sameNumber(d.Base, d.Head) || sameJSON(d.Base, d.Head))
}

// sameNumber says whether two values are the same number written two
// ways.
func sameNumber(a, b string) bool {
	if a == b {
		return false
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}

// sameJSON says whether two values are JSON objects or arrays that hold
// the same.
func sameJSON(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == b || a == "" || b == "" || (a[0] != '{' && a[0] != '[') || (b[0] != '{' && b[0] != '[') {
		return false
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// infraOption matches the server options of where it listens and logs.
var infraOption = regexp.MustCompile(`^--?(port|host|server-port|http-host|url|dist-init-addr|log-level|log-dir|uvicorn-log-level)$`)

// infraVar reports whether name is a variable of the runner rather than of
// the benchmark (paths, caches, ports, metrics files, Slurm and srt-slurm
// settings a launcher exports): a change of it is not a change of what
// runs. USER and HOME are the variables themselves, or HOME a name's last
// word (XDG_CACHE_HOME), not a word inside a name
// (AIPERF_HTTP_TCP_USER_TIMEOUT is a setting). Words are split at "_",
// case aside; a word match, not a regular expression, since every launch
// field of every point of a history walk asks (a third of blame's time).
func infraVar(name string) bool {
	up := strings.ToUpper(name)
	if infraWhole[up] {
		return true
	}
	words := strings.Split(up, "_")
	for _, w := range words {
		if infraWord[w] {
			return true
		}
	}
	return len(words) > 1 && infraLast[words[len(words)-1]]
}

var (
	infraWhole = setOf("USER", "HOME", "TMP", "TMPDIR", "PWD", "SHELL")
	infraWord  = setOf("SLURM", "SRT", "RUNNER", "GITHUB", "WORKSPACE", "SQUASH", "MOUNT", "JOB", "NODE", "PARTITION",
		"ACCOUNT", "PORT", "HOST", "LOG", "LOGS", "RESULT", "RESULTS", "METRICS", "CSV", "MONITOR")
	infraLast = setOf("PATH", "DIR", "FILE", "CACHE", "ROOT", "PREFIX", "HOME")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// flagName is an option's name in a diff: a described multi-node
// command's carries its role ("decode --mem-fraction-static").
func flagName(c *dryrun.Command, name string) string {
	if c.Role != "" {
		return c.Role + " " + name
	}
	return name
}

func flagMap(cs []dryrun.Command) map[string]string {
	m := map[string]string{}
	for i := range cs {
		for _, f := range cs[i].Flags {
			n := flagName(&cs[i], f.Name)
			v := strings.Join(f.Values, " ")
			if old, ok := m[n]; ok && old != v {
				v = old + "; " + v
			}
			m[n] = v
		}
	}
	return m
}

// envMap is what the launch sets in its servers' environment (the
// workflow's own variables aside); a described command's names carry
// its role.
func envMap(l *dryrun.Launch, base map[string]string) map[string]string {
	m := map[string]string{}
	for i := range l.Servers {
		s := &l.Servers[i]
		for _, k := range s.EnvChanges(base) {
			if !infraVar(k) && !sameModel(s.Env[k], base[k]) {
				m[flagName(s, k)] = s.Env[k]
			}
		}
		if s.Role == "" {
			break // a dry run's first server: what the others inherit
		}
	}
	return m
}

func fileMap(l *dryrun.Launch) map[string]string {
	m := map[string]string{}
	for i := range l.Servers {
		for k, v := range l.Servers[i].Files {
			m[k] = v
		}
		if l.Servers[i].Role == "" {
			break
		}
	}
	return m
}

// settingsOf reads "key: value" lines of a YAML or similar config file
// (keys by their last name; a repeated key keeps its last value).
func settingsOf(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \"'{[") {
			continue
		}
		m[k] = strings.TrimSpace(v)
	}
	return m
}

// sameModel reports whether two values name one model in two places: a
// hub id and a local copy of it ("nvidia/GLM-5-NVFP4" and
// "/scratch/fsw/models/GLM-5-NVFP4", or "/lustre/fsw/models/deepseek-v4-pro"
// for "deepseek-ai/DeepSeek-V4-Pro": a mirror's directory may be lower
// case). A launcher that mirrors weights locally changes where they are
// read from, not what runs.
func sameModel(a, b string) bool {
	if a == "" || b == "" || a == b || (!strings.HasPrefix(a, "/") && !strings.HasPrefix(b, "/")) {
		return false
	}
	ba, bb := path.Base(strings.TrimRight(a, "/")), path.Base(strings.TrimRight(b, "/"))
	return strings.EqualFold(ba, bb) && strings.Contains(strings.TrimPrefix(a, "/"), "/") && strings.Contains(strings.TrimPrefix(b, "/"), "/")
}

func diffMaps(kind string, b, h map[string]string, at string) []LaunchDiff {
	names := map[string]bool{}
	for k := range b {
		names[k] = true
	}
	for k := range h {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []LaunchDiff
	for _, k := range sorted {
		bv, bok := b[k]
		hv, hok := h[k]
		if bok == hok && (bv == hv || sameModel(bv, hv)) {
			continue
		}
		if kind == "client" && strings.HasPrefix(k, "--result") {
			continue // named after the point, not chosen by the recipe
		}
		out = append(out, LaunchDiff{Kind: kind, Name: k, Base: bv, Head: hv, BaseAbsent: !bok, HeadAbsent: !hok, At: at})
	}
	return out
}
