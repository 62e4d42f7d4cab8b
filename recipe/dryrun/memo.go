package dryrun

import (
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/recipe/revfs"
)

// Memo remembers dry runs by what they read: a point run again
// with the same launcher and environment, where each file the last run
// read holds the same object, launches the same, and is not run again.
// The launches it returns are shared: they must not be modified.
type Memo struct {
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
func (m *Memo) same(rd *memoRead, files fs.FS, h revfs.Hasher, called map[string]bool, shapes *lru.Cache[string, *codeShape]) bool {
	id := h.PathID(rd.path, rd.dir)
	if id == rd.id {
		return true
	}
	if rd.sig == "" || id == "" {
		return false
	}
	sh, ok := shapeAt(shapes, files, rd.path, id)
	return ok && sh.sig(called) == rd.sig
}

// NewMemo returns an empty memo.
func NewMemo() *Memo {
	return &Memo{runs: map[string][]memoRun{}}
}

// memoKeep bounds the runs kept per launcher and environment.
const memoKeep = 4

func (m *Memo) run(files fs.FS, launcher string, args []string, env map[string]string, shapes *lru.Cache[string, *codeShape], dry func(fs.FS) *Launch) *Launch {
	h, ok := files.(revfs.Hasher)
	if !ok {
		return dry(files)
	}
	var b strings.Builder
	b.WriteString(launcher)
	for _, a := range args {
		b.WriteString("\x01" + a)
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		b.WriteString("\x00" + k + "=" + env[k])
	}
	key := b.String()
	m.mu.Lock()
	cands := append([]memoRun(nil), m.runs[key]...)
	m.mu.Unlock()
	for _, c := range cands {
		hit := true
		for i := range c.reads {
			if !m.same(&c.reads[i], files, h, c.called, shapes) {
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
	rec := revfs.NewRecorder(files)
	l := dry(rec)
	if l == nil || l.Status == StatusUnknown {
		return l // a budget or a cancel may have cut it short
	}
	rr := l.read
	l.read = nil
	run := memoRun{launch: l}
	sign := rr != nil
	if sign {
		for p, sh := range rr.shapes {
			if id := h.PathID(p, false); id != "" {
				shapes.Put(id, sh)
			}
		}
	}
	if sign {
		for p := range rr.ran {
			if sh, ok := shapeAt(shapes, rec, p, h.PathID(p, false)); !ok || sh.Global {
				sign = false // the run could see any function of it
			}
		}
	}
	for _, p := range rec.Paths() {
		rd := memoRead{path: p, id: h.PathID(p, false)}
		if sign && rr.code[p] && rd.id != "" {
			if sh, ok := shapeAt(shapes, rec, p, rd.id); ok {
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
