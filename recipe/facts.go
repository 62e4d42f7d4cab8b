package recipe

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/perflog/perflog/recipe/dryrun"
)

// Facts are what one point launches, as fields a history can follow:
//
//	launch.status                      launched, failed, unknown, described
//	launch.image                       the image the point runs
//	launch.server                      the server program ("vllm serve")
//	launch.flags.--NAME                a server option's values
//	launch.env.NAME                    a variable the launch path set
//	launch.runner-env.NAME             one of the runner's (a path, cache, port),
//	                                   or a constant of the workflow's env
//	                                   the server receives
//	launch.files.FILE.KEY              a setting of a config file it is given
//	launch.router.flags.--NAME         a router option
//	launch.client.--NAME               a benchmark client option
//
// A described multi-node worker's fields carry its role
// (launch.decode.flags.--NAME), and its recipe's other settings are
// launch.settings.KEY. A point that is not dry-run has none.
func (pl *PointLaunch) Facts() map[string]string {
	l := pl.Launch
	if l == nil {
		return nil
	}
	p := &pl.Point
	out := map[string]string{"launch.status": l.Status}
	if img := p.Env["IMAGE"]; img != "" {
		out["launch.image"] = img
	}
	for i := range l.Servers {
		s := &l.Servers[i]
		pre := "launch."
		if s.Role != "" {
			pre += s.Role + "."
		}
		add(out, pre+"server", s.Program())
		for _, f := range s.Flags {
			add(out, pre+"flags."+f.Name, strings.Join(f.Values, " "))
		}
		if s.Role != "" || i == 0 {
			for _, k := range s.EnvChanges(p.Env) {
				if infraVar(k) || sameModel(s.Env[k], p.Env[k]) {
					// the runner's (paths, caches, ports, a local copy of
					// the model): what the server gets too, kept apart from
					// what a changelog entry tells
					out[pre+"runner-env."+k] = s.Env[k]
				} else {
					out[pre+"env."+k] = s.Env[k]
				}
			}
			for _, k := range p.EnvConst {
				// what the workflow gives every point and the server
				// receives as given: the runner's too
				if v, ok := s.Env[k]; ok && v == p.Env[k] {
					out[pre+"runner-env."+k] = v
				}
			}
			for name, content := range s.Files {
				where := pre + "files." + path.Base(name) + "."
				switch {
				case strings.HasSuffix(name, dryrun.SettingsSuffix):
					where = "launch.settings."
				case s.Role != "":
					where = pre + "config."
				}
				for k, v := range settingsOf(content) {
					out[where+k] = v
				}
			}
		}
	}
	for i := range l.Routers {
		for _, f := range l.Routers[i].Flags {
			add(out, "launch.router.flags."+f.Name, strings.Join(f.Values, " "))
		}
	}
	for i := range l.Clients {
		for _, f := range l.Clients[i].Flags {
			if !strings.HasPrefix(f.Name, "--result") {
				add(out, "launch.client."+f.Name, strings.Join(f.Values, " "))
			}
		}
	}
	return out
}

// RunnerField reports whether a launch field is one of the runner's
// variables (launch.runner-env.NAME, a worker's
// launch.ROLE.runner-env.NAME), which a changelog entry need not tell.
func RunnerField(path string) bool {
	b, _ := SplitField(path)
	rest, ok := strings.CutPrefix(b, "launch.")
	if !ok {
		return false
	}
	w := strings.SplitN(rest, ".", 3)
	return w[0] == "runner-env" || len(w) == 3 && w[1] == "runner-env" && !notRole[w[0]]
}

// notRole are the words after "launch." that name no worker.
var notRole = setOf("flags", "env", "files", "settings", "router", "client", "config")

// add sets a fact, joining a repeated one's values with "; ".
func add(m map[string]string, k, v string) {
	if old, ok := m[k]; ok && old != v {
		v = old + "; " + v
	}
	m[k] = v
}

// LaunchFields merges the facts of a recipe's points: a fact every point
// launches alike is one field; one that differs is a field per point
// configuration ("launch.flags.--x[tp8 dpa 8k1k]"), or per point where
// configurations that differ only in concurrency launch differently
// ("[tp8 dpa 8k1k conc 64]"). A benchmark client option that differs
// between points of one configuration (--max-concurrency) is the harness
// sizing a point, not a fact of the recipe, and is left out.
func LaunchFields(pls []PointLaunch) map[string]string {
	type pf struct {
		curve string
		conc  int64
		facts map[string]string
	}
	var pts []pf
	names := map[string]bool{}
	for i := range pls {
		f := pls[i].Facts()
		if f == nil {
			continue
		}
		pts = append(pts, pf{curveOf(&pls[i].Point), pls[i].Point.Conc, f})
		for k := range f {
			names[k] = true
		}
	}
	out := map[string]string{}
	const absent = "\x00"
	val := func(p pf, k string) string {
		if v, ok := p.facts[k]; ok {
			return v
		}
		return absent
	}
	groups := map[string][]pf{}
	for _, p := range pts {
		groups[p.curve] = append(groups[p.curve], p)
	}
	// alike is the value every point of ps has for k, if they agree
	alike := func(ps []pf, k string) (string, bool) {
		v := val(ps[0], k)
		for _, p := range ps[1:] {
			if val(p, k) != v {
				return "", false
			}
		}
		return v, true
	}
	for k := range names {
		if v, ok := alike(pts, k); ok {
			if v != absent {
				out[k] = v
			}
			continue
		}
		client := strings.HasPrefix(k, "launch.client.")
		for curve, g := range groups {
			if v, ok := alike(g, k); ok {
				if v != absent {
					out[fieldKey(k, curve)] = v
				}
				continue
			}
			if client {
				continue // sized by the point's concurrency: the harness's
			}
			for _, p := range g {
				if v := val(p, k); v != absent {
					out[fieldKey(k, strings.TrimSpace(curve+" conc "+strconv.FormatInt(p.conc, 10)))] = v
				}
			}
		}
	}
	return out
}

// curveOf names a point's configuration without its concurrency: "tp8
// dpa 8k1k".
func curveOf(p *LaunchPoint) string {
	l := p.Label()
	if i := strings.Index(l, "("); i >= 0 {
		l = strings.TrimSuffix(l[i+1:], ")")
	}
	f := strings.Fields(l)
	var out []string
	for i := 0; i < len(f); i++ {
		if f[i] == "conc" && i+1 < len(f) {
			i++
			continue
		}
		out = append(out, f[i])
	}
	return strings.Join(out, " ")
}

// fieldKey names a launch field about some points only: its path and
// their configuration, "launch.flags.--x[tp8 dpa 8k1k]".
func fieldKey(path, point string) string { return path + "[" + point + "]" }

// SplitField splits a launch field's name (LaunchFields) into its path and
// the configuration of the points it is about ("" for all of them).
func SplitField(k string) (path, point string) {
	if i := strings.LastIndex(k, "["); i >= 0 && strings.HasSuffix(k, "]") {
		return k[:i], k[i+1 : len(k)-1]
	}
	return k, ""
}

// PointID names a point by its parameters, the way launch fields qualify
// points: its configuration and its concurrency ("tp8 dpa 8k1k conc 64").
// Points are matched across commits by it, never by their position.
func PointID(p *LaunchPoint) string {
	return strings.TrimSpace(curveOf(p) + " conc " + strconv.FormatInt(p.Conc, 10))
}

// CurveOfID is the configuration part of a PointID ("tp8 dpa 8k1k").
func CurveOfID(id string) string {
	if i := strings.LastIndex(id, " conc "); i >= 0 {
		return id[:i]
	}
	if strings.HasPrefix(id, "conc ") {
		return ""
	}
	return id
}

// LaunchPoints lists the PointIDs of a recipe's points, sorted, each once,
// and says why some of them launch nothing perflog can read: "" when every
// point was dry-run to a launch, else the first reason met and how many
// points it leaves out ("3 of 12 points not run: no launcher runs it").
func LaunchPoints(pls []PointLaunch) (ids []string, notKnown string) {
	seen := map[string]bool{}
	n := 0
	for i := range pls {
		pl := &pls[i]
		if id := PointID(&pl.Point); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
		why := ""
		switch l := pl.Launch; {
		case l == nil:
			why = "not run: " + pl.Point.Note
			if pl.Point.Note == "" {
				why = "not run"
			}
		case l.Status == dryrun.StatusLaunched || l.Status == dryrun.StatusDescribed:
			continue
		case l.Status == dryrun.StatusNoServer && l.Reason == "":
			why = "no-server: the run ended without starting a server"
		default:
			why = l.Status
			if l.Reason != "" {
				why += ": " + l.Reason
			}
		}
		if n == 0 {
			notKnown = why
		}
		n++
	}
	slices.Sort(ids)
	if n > 0 {
		notKnown = fmt.Sprintf("%d of %d points %s", n, len(pls), notKnown)
	}
	return ids, notKnown
}
