package dryrun

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflog/perflog/internal/lru"
)

// ServeIfWorker makes this process a worker, and never returns, when its
// first argument is WorkerArg (main and TestMain call it first).
func ServeIfWorker() {
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		os.Exit(Serve(os.Args[2:]))
	}
}

// Serve makes this process a dry-run worker: args are what followed
// WorkerArg. It confines the process (confine), then runs the jobs it
// reads from stdin, side by side, until stdin closes, asking for their
// files on stdout; it returns the exit status.
func Serve(args []string) int {
	fl := flag.NewFlagSet(WorkerArg, flag.ContinueOnError)
	spy := fl.Bool("spy", false, "die on any file-system system call (tests)")
	fl.SetOutput(os.Stderr)
	if err := fl.Parse(args); err != nil {
		return 2
	}
	// a worker's live heap is small and its dry runs allocate much: at
	// Go's default the collector would run far more often than in one
	// process (the one SetGCPercent; docs/dev/performance.md)
	debug.SetGCPercent(400)
	how, degraded, err := confine(*spy)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dry-run worker: confinement failed:", err)
		return 2
	}
	s := &server{enc: gob.NewEncoder(os.Stdout), cache: NewCache(), blobs: lru.New[string, []byte](512), jobs: map[uint64]*remoteFS{},
		given: lru.New[[sha256.Size]byte, bool](512)}
	if err := s.send(fromWorker{Hello: &hello{Confinement: how, Degraded: degraded}}); err != nil {
		return 2
	}
	s.base = runtime.NumGoroutine()
	dec := gob.NewDecoder(os.Stdin)
	for {
		var m toWorker
		if err := dec.Decode(&m); err != nil {
			s.wg.Wait()
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "dry-run worker:", err)
			return 2
		}
		switch {
		case m.Job != nil:
			s.start(m.ID, m.Job)
		case m.Answer != nil:
			s.mu.Lock()
			r := s.jobs[m.ID]
			s.mu.Unlock()
			if r == nil {
				fmt.Fprintln(os.Stderr, "dry-run worker: an answer for no job")
				return 2
			}
			r.answers <- m.Answer
		default:
			fmt.Fprintln(os.Stderr, "dry-run worker: a message that is neither a job nor an answer")
			return 2
		}
	}
}

// server is a worker's state: its jobs running, and what they share.
type server struct {
	wmu   sync.Mutex // the writer
	enc   *gob.Encoder
	cache *Cache
	blobs *lru.Cache[string, []byte] // contents by object id, as the sandbox gave them

	mu       sync.Mutex
	given    *lru.Cache[[sha256.Size]byte, bool] // shapes given to the sandbox
	jobs     map[uint64]*remoteFS
	shared   map[uint64]bool // jobs that ran beside another
	stopping bool            // a job left the worker unclean: it takes no more
	base     int             // goroutines of an idle worker
	live     atomic.Int64    // goroutines running jobs
	wg       sync.WaitGroup
}

func (s *server) send(m fromWorker) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.enc.Encode(m)
}

// start runs a job in a goroutine of its own.
func (s *server) start(id uint64, j *job) {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		s.send(fromWorker{ID: id, Done: &done{Retry: true, Stopping: true}})
		return
	}
	r := &remoteFS{s: s, id: id, answers: make(chan *answer, 1), pre: map[ask]*answer{}}
	if len(s.jobs) > 0 {
		if s.shared == nil {
			s.shared = map[uint64]bool{}
		}
		for o := range s.jobs {
			s.shared[o] = true
		}
		s.shared[id] = true
	}
	s.jobs[id] = r
	s.mu.Unlock()
	for _, p := range j.Pre {
		r.pre[p.Q] = r.content(p.A)
	}
	s.wg.Add(1)
	s.live.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.live.Add(-1)
		o := Options{MaxSteps: j.MaxSteps, Timeout: j.Timeout, Memory: j.Memory, Patterns: j.Patterns, inWorker: true}
		l := runHere(context.Background(), s.cache, r, j.Script, j.Args, j.Env, o, j.Reads)
		d := &done{Launch: l}
		for _, c := range l.commands() {
			d.Envs = append(d.Envs, diffEnv(j.Env, c.Env))
			c.Env = nil
		}
		if rr := l.read; rr != nil {
			d.Code, d.Ran, d.Called = listOf(rr.code), listOf(rr.ran), listOf(rr.called)
			d.ShapeOf = map[string][sha256.Size]byte{}
			for p, sh := range rr.shapes {
				sum := sh.digest()
				d.ShapeOf[p] = sum
				if s.gave(sum) {
					continue
				}
				if d.Shapes == nil {
					d.Shapes = map[[sha256.Size]byte]*codeShape{}
				}
				d.Shapes[sum] = sh
			}
			l.read = nil
		}
		for q := range r.used {
			d.Used = append(d.Used, q)
		}
		s.mu.Lock()
		delete(s.jobs, id)
		d.Shared = s.shared[id]
		delete(s.shared, id)
		// the last job out checks that the worker is as it was: a job that
		// left goroutines running (a background job the interpreter still
		// waits for) or a broken conversation stops it
		if len(s.jobs) == 0 && (r.broken || s.unclean()) {
			s.stopping = true
		}
		d.Stopping = s.stopping
		s.mu.Unlock()
		s.send(fromWorker{ID: id, Done: d})
	}()
}

// gave reports whether the shape with this digest was given to the
// sandbox already (the sandbox keeps more than the worker remembers), and
// notes it given.
func (s *server) gave(sum [sha256.Size]byte) bool {
	if _, ok := s.given.Get(sum); ok {
		return true
	}
	s.given.Put(sum, true)
	return false
}

// unclean reports whether more goroutines than an idle worker's and its
// jobs' own still run a moment after its last job.
func (s *server) unclean() bool {
	for range 20 {
		if runtime.NumGoroutine() <= s.base+int(s.live.Load()) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// remoteFS is the revision's files as a job of a worker reads them: each
// read is a question to the sandbox, which answers from its fs.FS.
type remoteFS struct {
	s       *server
	id      uint64
	answers chan *answer

	mu     sync.Mutex // one question at a time
	broken bool
	data   map[string][]byte // files that came with a stat's answer
	pre    map[ask]*answer   // answers given with the job
	used   map[ask]bool      // those the run used
}

func (r *remoteFS) ask(op byte, name string) (*answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := ask{Op: op, Path: name}
	if a, ok := r.pre[q]; ok && a != nil {
		if r.used == nil {
			r.used = map[ask]bool{}
		}
		r.used[q] = true
		return r.answered(a, name)
	}
	a, err := r.question(q)
	if err == nil && a == nil { // the content was left out, and is no longer here
		a, err = r.question(ask{Op: op + 'A' - 'a', Path: name})
		if err == nil && a == nil {
			err = errors.New("the sandbox left out a content")
		}
	}
	if err != nil {
		r.broken = true
		return nil, err
	}
	return r.answered(a, name)
}

// question asks the sandbox and waits for its answer (nil: the answer
// left out a content this worker no longer holds).
func (r *remoteFS) question(q ask) (*answer, error) {
	if r.broken {
		return nil, errors.New("the sandbox does not answer")
	}
	if err := r.s.send(fromWorker{ID: r.id, Ask: &q}); err != nil {
		return nil, err
	}
	a, ok := <-r.answers
	if !ok {
		return nil, errors.New("the sandbox does not answer")
	}
	return r.content(a), nil
}

// content fills in an answer's content when it was left out (nil: this
// worker no longer has it), and keeps a content given.
func (r *remoteFS) content(a *answer) *answer {
	switch {
	case a == nil:
		return nil
	case a.Known:
		data, ok := r.s.blobs.Get(a.ID)
		if !ok {
			return nil
		}
		a.Data, a.Known = data, false
	case a.ID != "" && a.HasData:
		r.s.blobs.Put(a.ID, a.Data)
	}
	return a
}

// answered is an answer as the fs.FS's methods return it.
func (r *remoteFS) answered(a *answer, name string) (*answer, error) {
	switch a.Err {
	case "":
		return a, nil
	case errNotExist:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	default:
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New(a.Err)}
	}
}

// Open is not used by the dry run (it stats, reads and lists).
func (r *remoteFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
}

func (r *remoteFS) Stat(name string) (fs.FileInfo, error) {
	a, err := r.ask('s', name)
	if err != nil {
		return nil, err
	}
	if a.HasData {
		r.mu.Lock()
		if r.data == nil {
			r.data = map[string][]byte{}
		}
		r.data[name] = a.Data
		r.mu.Unlock()
	}
	return remoteInfo{name: path.Base(name), mode: a.Mode, size: a.Size}, nil
}

func (r *remoteFS) ReadFile(name string) ([]byte, error) {
	r.mu.Lock()
	data, ok := r.data[name]
	r.mu.Unlock()
	if ok {
		return data, nil
	}
	a, err := r.ask('r', name)
	if err != nil {
		return nil, err
	}
	return a.Data, nil
}

func (r *remoteFS) ReadDir(name string) ([]fs.DirEntry, error) {
	a, err := r.ask('d', name)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(a.Names))
	for i, n := range a.Names {
		out[i] = fs.FileInfoToDirEntry(remoteInfo{name: n, mode: a.Modes[i]})
	}
	return out, nil
}

type remoteInfo struct {
	name string
	mode fs.FileMode
	size int64
}

func (fi remoteInfo) Name() string       { return fi.name }
func (fi remoteInfo) Size() int64        { return fi.size }
func (fi remoteInfo) Mode() fs.FileMode  { return fi.mode }
func (fi remoteInfo) ModTime() time.Time { return time.Time{} }
func (fi remoteInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi remoteInfo) Sys() any           { return nil }
