package dryrun

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/recipe/revfs"
)

// A confined sandbox runs dry runs in a worker: a process of perflog's
// own binary (argv[0] WorkerArg), started with an empty environment in
// "/", which confines itself before it reads a byte of a job
// (confine_linux.go) and has no file of its own: it asks for each file of
// the revision, and the sandbox answers from the fs.FS the job was given.
// One worker runs the jobs of the sandbox's callers side by side (as the
// interpreter in one process would, sharing what it parsed). A job that
// overruns its wall time has the worker killed; a worker that dies (out
// of memory, a system call its confinement refuses, a thread limit)
// takes the jobs it ran with it, and each is run again alone in a worker
// of its own, so that what stops a worker is the job's own unknown and
// never its neighbour's.

// WorkerArg is the first argument that makes perflog's binary a dry-run
// worker (Serve): main calls ServeIfWorker before anything else.
const WorkerArg = "__perflog-dry-run-worker"

// Confined returns a sandbox that runs dry runs in workers started as
// argv (perflog's binary and WorkerArg; a test binary whose TestMain
// calls ServeIfWorker). spy makes a worker die on any file-system system
// call instead of refusing it (tests: proof that the interpreter made
// none).
func Confined(spy bool, argv ...string) *Sandbox {
	return &Sandbox{pool: &pool{argv: argv, spy: spy}, shapes: shapeCache()}
}

// job is one dry run sent to a worker.
type job struct {
	Script   string
	Args     []string
	Env      map[string]string
	MaxSteps int64
	Timeout  time.Duration
	Memory   int64
	Patterns *Patterns
	Reads    bool // keep how the run read its files (for a memo)
	// Pre are answers given before they are asked: those the last job
	// of the same script asked for (the worker says which it used).
	Pre []pre
}

// pre is an answer given before it is asked.
type pre struct {
	Q ask
	A *answer
}

// The messages of a worker and its sandbox, over the worker's stdin and
// stdout, in gob, each about the job ID: the sandbox sends a job, the
// worker asks for files (ask) and gets them (answer), then says what the
// job launched (done). A worker's first message is its hello.
type (
	toWorker struct {
		ID     uint64
		Job    *job
		Answer *answer
	}
	fromWorker struct {
		ID    uint64
		Hello *hello
		Ask   *ask
		Done  *done
	}
	// hello says how the worker is confined.
	hello struct {
		Confinement string
		Degraded    string // what it could not apply ("" when none)
	}
	ask struct {
		Op   byte // 's' stat, 'r' read, 'd' read the directory; upper case: with the content
		Path string
	}
	answer struct {
		// ID is the object the file holds (when the sandbox's fs.FS says);
		// Known says its Data is left out: the worker was given it.
		ID      string
		Known   bool
		Err     string // "" ok; errNotExist; another error's text
		Mode    fs.FileMode
		Size    int64
		Data    []byte
		HasData bool // a stat's answer with the file's content
		Names   []string
		Modes   []fs.FileMode
	}
	done struct {
		Launch *Launch
		// how it read its files (job.Reads): the files it read only as
		// code, those it ran, the names it called, and the shape of each
		// file it ran by its content's digest (Shapes: those the worker
		// did not give before)
		Code, Ran, Called []string
		ShapeOf           map[string][sha256.Size]byte
		Shapes            map[[sha256.Size]byte]*codeShape
		Used              []ask // the answers of job.Pre the run used
		// Envs are the environments of the launch's commands (servers,
		// routers, clients, in order), as they differ from the job's: the
		// commands' Env is left out
		Envs []envDiff
		// Shared: another job ran beside it (a memory stop may be the
		// other's); Retry: the worker is stopping and did not run it;
		// Stopping: the worker stops after its jobs (it is unclean).
		Shared, Retry, Stopping bool
	}
)

// envDiff is an environment as it differs from another: what it sets
// (to another value, or anew) and what it does not have.
type envDiff struct {
	Set   map[string]string
	Unset []string
}

// diffEnv is env as it differs from base.
func diffEnv(base, env map[string]string) envDiff {
	var d envDiff
	for k, v := range env {
		if b, ok := base[k]; !ok || b != v {
			if d.Set == nil {
				d.Set = map[string]string{}
			}
			d.Set[k] = v
		}
	}
	for k := range base {
		if _, ok := env[k]; !ok {
			d.Unset = append(d.Unset, k)
		}
	}
	return d
}

// apply is base with the difference applied.
func (d envDiff) apply(base map[string]string) map[string]string {
	env := make(map[string]string, len(base)+len(d.Set))
	for k, v := range base {
		env[k] = v
	}
	for _, k := range d.Unset {
		delete(env, k)
	}
	for k, v := range d.Set {
		env[k] = v
	}
	return env
}

// commands are a launch's recorded commands, in order.
func (l *Launch) commands() []*Command {
	var out []*Command
	for _, cs := range [][]Command{l.Servers, l.Routers, l.Clients} {
		for i := range cs {
			out = append(out, &cs[i])
		}
	}
	return out
}

const errNotExist = "not exist"

// maxAnswer bounds a file a worker is given (a larger one reads as not
// there, and the run says so); maxPrefetch the one a stat's answer
// carries.
const (
	maxAnswer   = 16 << 20
	maxPrefetch = 1 << 20
)

// grace is how long past a job's time budget its worker may take to
// answer before it is killed.
const grace = 2 * time.Second

// pool is a confined sandbox's worker.
type pool struct {
	argv []string
	spy  bool

	mu       sync.Mutex
	shared   *worker                                   // the worker of the callers' jobs (nil: none yet)
	shapes   *lru.Cache[[sha256.Size]byte, *codeShape] // shell files' shapes the workers gave
	asked    map[string][]ask                          // by script: what its last job asked
	closed   bool
	note     string // how workers are confined, once known
	degraded string
	stats    Stats
	all      sync.WaitGroup // workers not yet exited
}

// Stats count what a confined sandbox did.
type Stats struct {
	// Runs are the jobs run (Alone: again, alone, after a worker
	// stopped); Started the workers started; Killed those stopped at a
	// job's time budget; Died those that ended on their own.
	Runs, Alone, Started, Killed, Died int
	// PeakRSS is the largest resident size a worker reached, in bytes.
	PeakRSS int64
}

// worker is one worker process.
type worker struct {
	p      *pool
	cmd    *exec.Cmd
	in     io.WriteCloser
	dec    *gob.Decoder
	stderr *tail
	exited chan struct{}

	wmu  sync.Mutex // the writer: enc, sent
	enc  *gob.Encoder
	sent map[string]bool // the objects whose content the worker was given

	mu       sync.Mutex
	calls    map[uint64]*call
	next     uint64
	lost     error  // why it stopped answering (nil: it answers)
	killed   string // why the sandbox killed it
	stopping bool   // it said it stops after its jobs
}

// call is a job in a worker, waiting for its answer.
type call struct {
	files fs.FS
	asked []ask
	done  chan *done // nil sent: the worker stopped
	// stopped is why this job had the worker killed ("" when it did not)
	stopped atomic.Value
	// shared: other jobs were in the worker when it stopped
	shared bool
}

// tail keeps what a worker wrote to stderr, bounded: its first bytes (a
// Go crash says why on its first line, "fatal error: out of memory") and
// its last ones.
type tail struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
	cut  bool
}

const tailHead, tailKeep = 4 << 10, 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := tailHead - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailKeep {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailKeep:]...)
		t.cut = true
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	sep := ""
	if t.cut {
		sep = "\n…\n"
	}
	return string(t.head) + sep + string(t.buf)
}

// start starts a worker and reads its hello; the caller holds p.mu.
func (p *pool) start() (*worker, error) {
	if len(p.argv) == 0 || p.argv[0] == "" {
		return nil, errors.New("perflog cannot name its own binary to start a dry-run worker")
	}
	args := append([]string(nil), p.argv[1:]...)
	if p.spy {
		args = append(args, "-spy")
	}
	cmd := exec.Command(p.argv[0], args...)
	cmd.Env = []string{} // nothing of perflog's environment
	cmd.Dir = "/"
	workerAttrs(cmd)
	w := &worker{p: p, cmd: cmd, stderr: &tail{}, exited: make(chan struct{}), sent: map[string]bool{}, calls: map[uint64]*call{}}
	cmd.Stderr = w.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a dry-run worker: %w", err)
	}
	p.all.Add(1)
	w.in, w.enc, w.dec = in, gob.NewEncoder(in), gob.NewDecoder(out)
	var m fromWorker
	hi := make(chan error, 1)
	go func() { hi <- w.dec.Decode(&m) }()
	select {
	case err = <-hi:
	case <-time.After(10 * time.Second):
		err = errors.New("no answer in 10 s")
	}
	if err == nil && m.Hello == nil {
		err = errors.New("no hello")
	}
	go func() {
		cmd.Wait()
		p.mu.Lock()
		if rss := maxRSS(cmd.ProcessState); rss > p.stats.PeakRSS {
			p.stats.PeakRSS = rss
		}
		p.mu.Unlock()
		close(w.exited)
		p.all.Done()
	}()
	if err != nil {
		w.kill("did not start")
		<-w.exited
		return nil, fmt.Errorf("a dry-run worker did not start: %v %s", err, strings.TrimSpace(lastLine(w.stderr.String())))
	}
	p.stats.Started++
	p.note, p.degraded = m.Hello.Confinement, m.Hello.Degraded
	go w.read()
	return w, nil
}

// read dispatches what the worker says: the files its jobs ask for, and
// their answers. When the worker stops answering, every job waiting is
// told (a nil done).
func (w *worker) read() {
	var err error
	for {
		var m fromWorker
		if err = w.dec.Decode(&m); err != nil {
			break
		}
		w.mu.Lock()
		c := w.calls[m.ID]
		if m.Done != nil {
			delete(w.calls, m.ID)
			w.stopping = w.stopping || m.Done.Stopping
		}
		w.mu.Unlock()
		if c == nil {
			err = fmt.Errorf("a message about no job (%d)", m.ID)
			break
		}
		switch {
		case m.Done != nil:
			c.done <- m.Done
		case m.Ask != nil:
			// answered on its own goroutine: reading a file of one job
			// does not hold up the messages of the others
			w.mu.Lock()
			c.asked = append(c.asked, *m.Ask)
			w.mu.Unlock()
			go w.reply(c, m.ID, m.Ask)
		default:
			err = errors.New("an unexpected message")
		}
		if err != nil {
			break
		}
	}
	w.cmd.Process.Kill() // a worker that says what it should not is stopped
	<-w.exited
	w.mu.Lock()
	w.lost = err
	calls := w.calls
	w.calls = nil
	w.mu.Unlock()
	for _, c := range calls {
		c.shared = len(calls) > 1
		c.done <- nil
	}
}

// kill stops the worker for a reason (the first one given stays).
func (w *worker) kill(why string) {
	w.mu.Lock()
	if w.killed == "" {
		w.killed = why
	}
	w.mu.Unlock()
	w.cmd.Process.Kill()
}

// send starts a job in the worker (false: the worker no longer takes
// jobs).
func (w *worker) send(c *call, j *job) (uint64, bool) {
	w.mu.Lock()
	if w.calls == nil || w.stopping || w.killed != "" {
		w.mu.Unlock()
		return 0, false
	}
	w.next++
	id := w.next
	w.calls[id] = c
	w.mu.Unlock()
	w.wmu.Lock()
	err := w.enc.Encode(toWorker{ID: id, Job: j})
	if err == nil {
		for _, p := range j.Pre {
			if p.A.Data != nil && p.A.ID != "" {
				w.sent[p.A.ID] = true // as for an answer (reply)
			}
		}
	}
	w.wmu.Unlock()
	if err != nil {
		w.cmd.Process.Kill() // read tells the waiting jobs
	}
	return id, true
}

// stop ends a worker: its stdin closes, and it exits once its jobs are
// done.
func (w *worker) stop() {
	w.wmu.Lock()
	w.in.Close()
	w.wmu.Unlock()
	select {
	case <-w.exited:
	case <-time.After(2 * time.Second):
		w.kill("stopped")
		<-w.exited
	}
}

// worker returns the shared worker, starting one when there is none or
// the last one stopped taking jobs.
func (p *pool) worker() (*worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("the sandbox is closed")
	}
	if w := p.shared; w != nil {
		w.mu.Lock()
		ok := w.calls != nil && !w.stopping && w.killed == ""
		w.mu.Unlock()
		if ok {
			return w, nil
		}
		go w.stop()
	}
	w, err := p.start()
	if err != nil {
		return nil, err
	}
	p.shared = w
	return w, nil
}

func (p *pool) close() {
	p.mu.Lock()
	w := p.shared
	p.shared, p.closed = nil, true
	p.mu.Unlock()
	if w != nil {
		w.stop()
	}
	p.all.Wait()
}

// run runs a job in the shared worker, answering its questions from
// files; a job the worker could not finish because of another runs again
// alone.
func (p *pool) run(ctx context.Context, files fs.FS, j job) *Launch {
	for range 3 {
		if err := ctx.Err(); err != nil {
			return unknownLaunch("not run: %v", err)
		}
		w, err := p.worker()
		if err != nil {
			return unknownLaunch("the sandbox could not run it: %v", err)
		}
		l, again := p.runIn(ctx, w, files, j)
		if !again {
			return l
		}
		if l != nil { // the worker stopped with others' jobs in it
			p.mu.Lock()
			p.stats.Alone++
			p.mu.Unlock()
			return p.runAlone(ctx, files, j)
		}
	}
	return unknownLaunch("the dry-run worker kept stopping before it ran it")
}

// runAlone runs a job in a worker of its own.
func (p *pool) runAlone(ctx context.Context, files fs.FS, j job) *Launch {
	p.mu.Lock()
	w, err := p.start()
	p.mu.Unlock()
	if err != nil {
		return unknownLaunch("the sandbox could not run it: %v", err)
	}
	defer w.stop()
	l, again := p.runIn(ctx, w, files, j)
	if again {
		return unknownLaunch("the dry-run worker stopped before it ran it")
	}
	return l
}

// runIn runs a job in w. again says it should run elsewhere: the worker
// did not take it (nil launch), or stopped, or hit its memory, with other
// jobs beside it (the launch says what this one saw).
func (p *pool) runIn(ctx context.Context, w *worker, files fs.FS, j job) (l *Launch, again bool) {
	p.mu.Lock()
	prev := p.asked[j.Script]
	p.mu.Unlock()
	// the answers the last job of this script asked for, read from
	// under a recorder: what the run uses of them is recorded below
	inner := files
	if r, ok := files.(interface{ Unwrap() fs.FS }); ok {
		inner = r.Unwrap()
	}
	for _, q := range prev {
		j.Pre = append(j.Pre, pre{q, w.answer(inner, &q)})
	}
	c := &call{files: files, done: make(chan *done, 1)}
	if _, ok := w.send(c, &j); !ok {
		return nil, true
	}
	p.mu.Lock()
	p.stats.Runs++
	p.mu.Unlock()
	timer := time.AfterFunc(j.Timeout+grace, func() { c.stopped.Store("time"); w.kill("time") })
	stopCtx := context.AfterFunc(ctx, func() { c.stopped.Store("cancelled"); w.kill("cancelled") })
	d := <-c.done
	timer.Stop()
	stopCtx()
	if d == nil {
		return w.lostJob(c, j)
	}
	if d.Retry {
		return nil, true
	}
	if n, ok := files.(interface{ Note(string, bool) }); ok {
		for _, q := range d.Used {
			n.Note(q.Path, q.Op == 'd')
		}
	}
	p.mu.Lock()
	if p.asked == nil {
		p.asked = map[string][]ask{}
	}
	p.asked[j.Script] = append(c.asked, d.Used...)
	p.mu.Unlock()
	l = d.Launch
	if l == nil {
		return unknownLaunch("the dry-run worker answered nothing"), false
	}
	if cs := l.commands(); len(cs) == len(d.Envs) {
		for i, c := range cs {
			c.Env = d.Envs[i].apply(j.Env)
		}
	}
	if d.Shared && l.Status == StatusUnknown && (strings.HasPrefix(l.Reason, memoryStop) || strings.HasPrefix(l.Reason, processStop)) {
		return l, true // the heap, or the goroutines, it counted were shared
	}
	if j.Reads {
		l.read = &runReads{code: setOf(d.Code), ran: setOf(d.Ran), called: setOf(d.Called), shapes: map[string]*codeShape{}}
		p.mu.Lock()
		if p.shapes == nil {
			p.shapes = lru.New[[sha256.Size]byte, *codeShape](1024)
		}
		for sum, sh := range d.Shapes {
			p.shapes.Put(sum, sh)
		}
		for path, sum := range d.ShapeOf {
			if sh, ok := p.shapes.Get(sum); ok {
				l.read.shapes[path] = sh
			}
		}
		p.mu.Unlock()
	}
	return l, false
}

func setOf(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

func listOf(m map[string]bool) []string {
	l := make([]string, 0, len(m))
	for s := range m {
		l = append(l, s)
	}
	return l
}

// lostJob is the launch of a job whose worker stopped before it answered;
// again when the worker was killed for another job, or died with other
// jobs beside it.
func (w *worker) lostJob(c *call, j job) (*Launch, bool) {
	<-w.exited
	why := w.killedFor()
	own, _ := c.stopped.Load().(string)
	w.p.mu.Lock()
	if why != "" {
		w.p.stats.Killed++
	} else {
		w.p.stats.Died++
	}
	w.p.mu.Unlock()
	said := w.stderr.String()
	switch {
	case own == "time":
		return unknownLaunch("stopped at the time budget (%v): the sandbox killed it", j.Timeout), false
	case own == "cancelled":
		return unknownLaunch("not run to the end: cancelled"), false
	case why != "":
		return nil, true // killed for another job: this one runs again
	case strings.Contains(said, "out of memory") || strings.Contains(said, "cannot allocate memory"):
		return unknownLaunch("%s (%d MiB): the dry-run worker ran out of memory", memoryStop, j.Memory>>20), c.shared
	case strings.Contains(said, "SIGSYS"):
		return unknownLaunch("the dry-run worker made a system call its confinement refuses: %s", firstLine(said, "SIGSYS")), c.shared
	case strings.Contains(said, "thread exhaustion") || strings.Contains(said, "too many"):
		return unknownLaunch("stopped at the dry-run worker's limits: %s", firstLine(said, "fatal error")), c.shared
	}
	state := ""
	if ps := w.cmd.ProcessState; ps != nil {
		state = ps.String()
	}
	w.mu.Lock()
	lost := w.lost
	w.mu.Unlock()
	return unknownLaunch("the dry-run worker stopped (%s): %v %s", state, lost, strings.TrimSpace(firstLine(said, ""))), c.shared
}

func (w *worker) killedFor() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killed
}

// memoryStop starts the reason of a run stopped at its memory budget.
const memoryStop = "stopped at the memory budget"

// firstLine is the first line of s that holds substr (the first line
// when substr is "").
func firstLine(s, substr string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) && strings.TrimSpace(l) != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return ""
}

// unknownLaunch is a run that could not be evaluated.
func unknownLaunch(format string, a ...any) *Launch {
	return &Launch{Status: StatusUnknown, Reason: fmt.Sprintf(format, a...)}
}

// answer answers the worker's question from files. A content the
// worker was given already is left out (Known), and not read; an
// upper-case op asks for the content anyway. The caller holds wmu.
// reply answers a job's question; a worker that cannot be told is
// stopped (its jobs then end, as when it stops answering).
func (w *worker) reply(c *call, id uint64, q *ask) {
	a := w.answer(c.files, q)
	w.wmu.Lock()
	err := w.enc.Encode(toWorker{ID: id, Answer: a})
	if err == nil && a.Data != nil && a.ID != "" {
		// known from now on: an answer that says so is encoded after
		// the one that gave it
		w.sent[a.ID] = true
	}
	w.wmu.Unlock()
	if err != nil {
		w.cmd.Process.Kill()
	}
}

// answer answers a question about files; the content of a file the
// worker holds already (w.sent) is not sent again.
func (w *worker) answer(files fs.FS, q *ask) *answer {
	full := q.Op >= 'A' && q.Op <= 'Z'
	if full {
		q = &ask{Op: q.Op + 'a' - 'A', Path: q.Path}
	}
	known := func(id string) bool {
		w.wmu.Lock()
		defer w.wmu.Unlock()
		return id != "" && !full && w.sent[id]
	}
	a := &answer{}
	fail := func(err error) *answer {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			a.Err = errNotExist
		} else {
			a.Err = err.Error()
		}
		return a
	}
	switch q.Op {
	case 's', 'r':
		fi, err := fs.Stat(files, q.Path)
		if err != nil {
			return fail(err)
		}
		a.Mode, a.Size = fi.Mode(), fi.Size()
		regular := fi.Mode().IsRegular()
		switch {
		case q.Op == 'r' && !regular:
			a.Err = errNotExist
		case q.Op == 'r' && fi.Size() > maxAnswer:
			a.Err = fmt.Sprintf("%d MiB, over the %d MiB a dry run reads", fi.Size()>>20, maxAnswer>>20)
		case !regular || (q.Op == 's' && fi.Size() > maxPrefetch):
			// a directory, or a file too large to come with a stat
		default:
			// a file is stat'ed to be read: its content comes with the
			// answer, or its object when the worker holds it
			a.ID, a.HasData = objectID(files, q.Path), true
			if known(a.ID) {
				a.Known = true
				break
			}
			data, err := fs.ReadFile(files, q.Path)
			if err != nil {
				return fail(err)
			}
			a.Data = data
		}
	case 'd':
		ents, err := fs.ReadDir(files, q.Path)
		if err != nil {
			return fail(err)
		}
		for _, e := range ents {
			a.Names = append(a.Names, e.Name())
			a.Modes = append(a.Modes, e.Type())
		}
	default:
		a.Err = "unknown question"
	}
	return a
}

// objectID is the object a file of files holds ("" when files does not
// say).
func objectID(files fs.FS, p string) string {
	if h, ok := files.(revfs.Hasher); ok {
		return h.PathID(p, false)
	}
	return ""
}

// Confinement says how the sandbox's workers are confined ("" before the
// first started, or in this process), and what the machine lacked of it
// ("" when nothing).
func (sb *Sandbox) Confinement() (how, degraded string) {
	if sb.pool == nil {
		return "", ""
	}
	sb.pool.mu.Lock()
	defer sb.pool.mu.Unlock()
	return sb.pool.note, sb.pool.degraded
}

// Stats are what the sandbox's workers did so far (zero in this process).
func (sb *Sandbox) Stats() Stats {
	if sb.pool == nil {
		return Stats{}
	}
	sb.pool.mu.Lock()
	defer sb.pool.mu.Unlock()
	return sb.pool.stats
}
