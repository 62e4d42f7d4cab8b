package recipe

import (
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Facts are what one point launches, as fields a history can follow:
//
//	launch.status                      launched, failed, unknown, described
//	launch.image                       the image the point runs
//	launch.server                      the server program ("vllm serve")
//	launch.flags.--NAME                a server option's values
//	launch.env.NAME                    a variable the launch path set
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
				if !infraVar.MatchString(k) {
					out[pre+"env."+k] = s.Env[k]
				}
			}
			for name, content := range s.Files {
				where := pre + "files." + path.Base(name) + "."
				switch {
				case strings.HasSuffix(name, SettingsSuffix):
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
// between points (--max-concurrency, --input-len) is the harness sizing
// a point, not a fact of the recipe, and is left out.
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
		if strings.HasPrefix(k, "launch.client.") {
			continue // sized by the point (lengths, concurrency): the harness's
		}
		for curve, g := range groups {
			if v, ok := alike(g, k); ok {
				if v != absent {
					out[fieldKey(k, curve)] = v
				}
				continue
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

// Recorder is an fs.FS that notes what is read through it: each path
// read or probed, and each directory listed. A dry run is a function of
// the revision's files through what it read (and of the point's
// environment): where none of them changed, it launches the same.
type Recorder struct {
	fsys        fs.FS
	mu          sync.Mutex
	paths, dirs map[string]bool
}

// NewRecorder wraps fsys.
func NewRecorder(fsys fs.FS) *Recorder {
	return &Recorder{fsys: fsys, paths: map[string]bool{}, dirs: map[string]bool{}}
}

func (r *Recorder) note(m map[string]bool, p string) {
	r.mu.Lock()
	m[p] = true
	r.mu.Unlock()
}

// Open notes name as read (a directory opened is listed).
func (r *Recorder) Open(name string) (fs.File, error) {
	f, err := r.fsys.Open(name)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			r.note(r.dirs, name)
			return f, nil
		}
	}
	r.note(r.paths, name)
	return f, err
}

// ReadFile notes name as read.
func (r *Recorder) ReadFile(name string) ([]byte, error) {
	r.note(r.paths, name)
	return fs.ReadFile(r.fsys, name)
}

// Stat notes name as probed.
func (r *Recorder) Stat(name string) (fs.FileInfo, error) {
	r.note(r.paths, name)
	return fs.Stat(r.fsys, name)
}

// ReadDir notes name as listed.
func (r *Recorder) ReadDir(name string) ([]fs.DirEntry, error) {
	r.note(r.dirs, dirName(name))
	return fs.ReadDir(r.fsys, name)
}

// dirName is the directory name ListFiles was given for an fs path ("."
// is the root, "").
func dirName(name string) string {
	if name == "." {
		return ""
	}
	return name
}

// Paths are the paths read or probed, and Dirs the directories listed
// (what matters of a directory is its names), sorted.
func (r *Recorder) Paths() []string { return r.sorted(r.paths) }

func (r *Recorder) Dirs() []string { return r.sorted(r.dirs) }

func (r *Recorder) sorted(m map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Note records a path as read (or a directory as listed) without reading
// it: what a memoised dry run read.
func (r *Recorder) Note(p string, dir bool) {
	if dir {
		r.note(r.dirs, p)
	} else {
		r.note(r.paths, p)
	}
}

// PathID is the inner fs.FS's PathID ("" when it has none).
func (r *Recorder) PathID(p string, dir bool) string {
	if h, ok := r.fsys.(Hasher); ok {
		return h.PathID(p, dir)
	}
	return ""
}

// Hasher is an fs.FS that says what a path holds without reading it: a
// file's object id, a directory's names ("" for nothing there). A git
// tree is one.
type Hasher interface {
	PathID(path string, dir bool) string
}

// DryRunMemo remembers dry runs by what they read: a point run again
// with the same launcher and environment, where each file the last run
// read holds the same object, launches the same, and is not run again.
// The launches it returns are shared: they must not be modified.
type DryRunMemo struct {
	mu   sync.Mutex
	runs map[string][]memoRun
}

type memoRun struct {
	reads  []memoRead
	called map[string]bool // names the run called (runReads)
	launch *Launch
}

// memoRead is a path the run read and what it held; sig, for a shell
// file read only as code, is its code signature (codeShape.sig), which a
// changed object may still match.
type memoRead struct {
	path string
	dir  bool
	id   string
	sig  string
}

// same reports whether the file rd names holds, in files, what the run
// read: the same object, or code with the same signature.
func (rd *memoRead) same(files fs.FS, h Hasher, called map[string]bool) bool {
	id := h.PathID(rd.path, rd.dir)
	if id == rd.id {
		return true
	}
	if rd.sig == "" || id == "" {
		return false
	}
	sh, ok := shapeAt(files, rd.path, id)
	return ok && sh.sig(called) == rd.sig
}

// NewDryRunMemo returns an empty memo.
func NewDryRunMemo() *DryRunMemo { return &DryRunMemo{runs: map[string][]memoRun{}} }

// memoKeep bounds the runs kept per launcher and environment.
const memoKeep = 4

func (m *DryRunMemo) run(files fs.FS, launcher string, env map[string]string, dry func(fs.FS) *Launch) *Launch {
	h, ok := files.(Hasher)
	if !ok {
		return dry(files)
	}
	var b strings.Builder
	b.WriteString(launcher)
	for _, k := range sortedKeys(env) {
		b.WriteString("\x00" + k + "=" + env[k])
	}
	key := b.String()
	m.mu.Lock()
	cands := append([]memoRun(nil), m.runs[key]...)
	m.mu.Unlock()
	for _, c := range cands {
		hit := true
		for i := range c.reads {
			if !c.reads[i].same(files, h, c.called) {
				hit = false
				break
			}
		}
		if hit {
			if n, ok := files.(interface{ Note(string, bool) }); ok {
				for _, rd := range c.reads {
					n.Note(rd.path, rd.dir)
				}
			}
			return c.launch
		}
	}
	rec := NewRecorder(files)
	l := dry(rec)
	if l == nil || l.Status == StatusUnknown {
		return l // a budget or a cancel may have cut it short
	}
	rr := l.read
	l.read = nil
	run := memoRun{launch: l}
	sign := rr != nil
	if sign {
		for p := range rr.ran {
			if sh, ok := shapeAt(rec, p, h.PathID(p, false)); !ok || sh.global {
				sign = false // the run could see any function of it
			}
		}
	}
	for _, p := range rec.Paths() {
		rd := memoRead{path: p, id: h.PathID(p, false)}
		if sign && rr.code[p] && rd.id != "" {
			if sh, ok := shapeAt(rec, p, rd.id); ok {
				rd.sig = sh.sig(rr.called)
			}
		}
		run.reads = append(run.reads, rd)
	}
	if sign {
		run.called = rr.called
	}
	for _, d := range rec.Dirs() {
		run.reads = append(run.reads, memoRead{path: d, dir: true, id: h.PathID(d, true)})
	}
	m.mu.Lock()
	rs := append(m.runs[key], run)
	if len(rs) > memoKeep {
		rs = rs[len(rs)-memoKeep:]
	}
	m.runs[key] = rs
	m.mu.Unlock()
	return l
}
