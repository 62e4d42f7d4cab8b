package recipe

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/perflog/perflog/internal/ghexpr"
	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/recipe/revfs"
)

// pointWorkflow is how the revision's own benchmark workflow turns a
// single-node point of the sweep into the environment its launcher
// starts with, read from the revision's files:
//
//   - the template workflow (benchmark-tmpl.yml today): the workflow
//     that has a step running runners/launch_*.sh, with its inputs (type,
//     default), its env: block, the launch step's env: and the variables
//     the step's script exports before it starts the launcher;
//   - its callers: the jobs of the sweep workflows that run it over a
//     matrix of points (run-sweep.yml today; the per-length schedulers
//     of 2025), with the inputs they pass (`tp: ${{ matrix.config.tp }}`);
//     a point runs under the one whose written inputs agree with it.
//
// A point's environment is then evaluated the way a run evaluates it
// (workflowenv.go). A revision without such a workflow, or one read here
// only in part, gets the embedded table (pointEnv).
type pointWorkflow struct {
	inner   fs.FS                       // the revision's files, read unrecorded
	note    func(path string, dir bool) // records a file the environment depends on (nil: none)
	cache   *SweepCache                 // nil: none
	ids     map[string]string           // the files' object ids, by name ("" unknown)
	names   []string                    // the workflow files' names
	docs    map[string]*yaml.Node       // parsed, by name
	callers map[string][]callerJob      // "fixed-seq-len", "agentic-coding" → the jobs that run it
	*template
}

// template is the template workflow as a point's environment reads it
// (immutable once read; shared by the revisions that hold the same file).
type template struct {
	tmpl   string // its name
	file   string // its path
	inputs []wfInput
	env    []wfVar  // the workflow's env:
	step   []wfVar  // the launch step's env:
	run    string   // the launch step's script
	sig    string   // all of the above, for a cache key
	consts []string // the names env: or the step's env: give a literal, sorted

	mu      sync.Mutex
	scripts map[string][]*syntax.Stmt // run as interpolated → its statements before the launcher
}

// readTemplate reads a template from its parsed file (nil: the file is
// no single-node template).
func readTemplate(name string, doc *yaml.Node, multinode bool) *template {
	if doc == nil || strings.Contains(name, "multinode") != multinode || child(child(doc, "on"), "workflow_call") == nil || launchStep(doc) == nil {
		return nil
	}
	t := &template{tmpl: name, file: workflowDir + "/" + name, scripts: map[string][]*syntax.Stmt{}}
	var sig strings.Builder
	if in := child(child(child(doc, "on"), "workflow_call"), "inputs"); in != nil && in.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(in.Content); i += 2 {
			spec := in.Content[i+1]
			wi := wfInput{name: in.Content[i].Value, typ: "string"}
			if t := child(spec, "type"); t != nil {
				wi.typ = t.Value
			}
			if d := child(spec, "default"); d != nil && d.Kind == yaml.ScalarNode {
				wi.def, wi.hasDef = d.Value, true
			}
			t.inputs = append(t.inputs, wi)
			fmt.Fprintf(&sig, "in %q %q %q %v\n", wi.name, wi.typ, wi.def, wi.hasDef)
		}
	}
	t.env = pairs(child(doc, "env"))
	step := launchStep(doc)
	t.step = pairs(child(step, "env"))
	t.run = child(step, "run").Value
	t.consts = literals(t.env, t.step)
	for _, v := range t.env {
		fmt.Fprintf(&sig, "env %q %q\n", v.name, v.value)
	}
	for _, v := range t.step {
		fmt.Fprintf(&sig, "step %q %q\n", v.name, v.value)
	}
	fmt.Fprintf(&sig, "run %q %q\n", name, t.run)
	sum := sha256.Sum256([]byte(sig.String()))
	t.sig = hex.EncodeToString(sum[:])
	return t
}

// literals are the names the workflow gives the same value at every
// point: a value without an expression, in the step's env: if it sets
// the name, else in the workflow's (a file the runner gives the step
// is the runner's, whatever the workflow says).
func literals(env, step []wfVar) []string {
	lit := map[string]bool{}
	for _, vs := range [][]wfVar{env, step} {
		for _, v := range vs {
			lit[v.name] = !strings.Contains(v.value, "${{") && !slices.Contains(runnerFiles, v.name)
		}
	}
	var out []string
	for n, ok := range lit {
		if ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

type wfInput struct {
	name, typ, def string
	hasDef         bool
}

type wfVar struct{ name, value string }

const workflowDir = ".github/workflows"

// maxWorkflowSize bounds a workflow file perflog parses (a stranger's
// file; InferenceX's largest is 40 KB): a larger one is not read.
const maxWorkflowSize = 1 << 20

// workflow is the revision's point workflow, read once (nil: none).
func (r *Rev) workflow() *pointWorkflow {
	if !r.wfRead {
		r.wf, r.wfRead = readPointWorkflow(r.Files, r.sweep, false), true
	}
	return r.wf
}

// multinodeWorkflow is the revision's workflow of multi-node points
// (benchmark-multinode-tmpl.yml today), read once (nil: none).
func (r *Rev) multinodeWorkflow() *pointWorkflow {
	if !r.mwfRead {
		r.mwf, r.mwfRead = readPointWorkflow(r.Files, r.sweep, true), true
	}
	return r.mwf
}

// yamlDoc parses a workflow file; nil when it does not parse.
func yamlDoc(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// child is the value of key k of mapping n (aliases resolved).
func child(n *yaml.Node, k string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// pairs are a mapping's scalar entries in order (the raw text of each
// value: `0.10` stays 0.10).
func pairs(n *yaml.Node) []wfVar {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []wfVar
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := deref(n.Content[i+1])
		if v == nil || v.Kind != yaml.ScalarNode {
			continue
		}
		val := v.Value
		if v.Tag == "!!null" {
			val = ""
		}
		out = append(out, wfVar{n.Content[i].Value, val})
	}
	return out
}

// launchStep is the step of a job that runs runners/launch_*.sh.
func launchStep(wf *yaml.Node) *yaml.Node {
	jobs := child(wf, "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return nil
	}
	for i := 1; i < len(jobs.Content); i += 2 {
		steps := child(jobs.Content[i], "steps")
		if steps == nil || steps.Kind != yaml.SequenceNode {
			continue
		}
		for _, st := range steps.Content {
			if run := child(st, "run"); run != nil && strings.Contains(run.Value, "runners/launch_") {
				return deref(st)
			}
		}
	}
	return nil
}

// templateName is where the template has lived (every commit of
// InferenceX's history has it); another workflow_call workflow with a
// launch step is looked for only without it.
const templateName = "benchmark-tmpl.yml"

// multinodeTemplateName is the template of multi-node points.
const multinodeTemplateName = "benchmark-multinode-tmpl.yml"

// readPointWorkflow reads the template of single-node points, or of
// multi-node points (a template whose name says "multinode"), and its
// callers.
func readPointWorkflow(files fs.FS, cache *SweepCache, multinode bool) *pointWorkflow {
	paths, err := revfs.ListFiles(files, workflowDir)
	if err != nil || len(paths) == 0 {
		return nil
	}
	w := &pointWorkflow{inner: files, cache: cache, docs: map[string]*yaml.Node{}, ids: map[string]string{},
		callers: map[string][]callerJob{}}
	// A history walk watches what a revision's reads touched; of the
	// workflow files only the template and the callers' files decide a
	// point's environment (use), not every file a caller was looked for in.
	if rec, ok := files.(interface {
		Unwrap() fs.FS
		Note(string, bool)
	}); ok {
		w.inner, w.note = rec.Unwrap(), rec.Note
	}
	for _, p := range paths {
		if ext := path.Ext(p); ext == ".yml" || ext == ".yaml" {
			w.names = append(w.names, path.Base(p))
		}
	}
	first := templateName
	if multinode {
		first = multinodeTemplateName
	}
	for _, name := range append([]string{first}, w.names...) {
		if !slices.Contains(w.names, name) {
			continue
		}
		if t := w.readTemplate(name, multinode); t != nil {
			w.template = t
			w.use(name)
			return w
		}
	}
	return nil
}

// readTemplate is the file as a template, read once per content.
func (w *pointWorkflow) readTemplate(name string, multinode bool) *template {
	id := w.fileID(name)
	if id != "" {
		id += fmt.Sprintf("\x00%v", multinode)
	}
	if id != "" && w.cache != nil {
		if t, ok := w.cache.tmpls.Get(id); ok {
			return t
		}
	}
	t := readTemplate(name, w.doc(name), multinode)
	if id != "" && w.cache != nil {
		w.cache.tmpls.Put(id, t)
	}
	return t
}

// fileID is a workflow file's object id ("" when the tree does not say).
func (w *pointWorkflow) fileID(name string) string {
	if id, ok := w.ids[name]; ok {
		return id
	}
	id := ""
	if h, ok := w.inner.(revfs.Hasher); ok {
		id = h.PathID(workflowDir+"/"+name, false)
	}
	w.ids[name] = id
	return id
}

// doc is a workflow file of the revision, parsed once (nil when it does
// not parse). It is read without being recorded (see readPointWorkflow);
// what is read from it is kept by content in the cache (readTemplate,
// jobsIn), so a history parses each version once.
func (w *pointWorkflow) doc(name string) *yaml.Node {
	if d, ok := w.docs[name]; ok {
		return d
	}
	var d *yaml.Node
	if data, ok, err := revfs.ReadFile(w.inner, workflowDir+"/"+name); err == nil && ok && len(data) <= maxWorkflowSize {
		d = yamlDoc(data)
	}
	w.docs[name] = d
	return d
}

// use records that the point's environment depends on the file (a
// history walk dry-runs again when it changes).
func (w *pointWorkflow) use(name string) {
	if w.note != nil {
		w.note(workflowDir+"/"+name, false)
	}
}

// SweepCache keeps what the revisions of a history share of what turns a
// recipe into points: the sweep generator, runners.yaml and the workflow
// read once per content, and the environments of points by what decides
// them. A history walk owns one and hands it to each revision
// (Rev.UseSweepCache); it is safe for concurrent use. Without it a walk
// parses the same files again at each commit it dry-runs
// (docs/dev/performance.md).
type SweepCache struct {
	tmpls   *lru.Cache[string, *template] // by file id (nil: not a template)
	gens    *lru.Cache[string, sweepGenerator]
	runners *lru.Cache[string, parsedRunners] // runners.yaml
	jobs    *lru.Cache[string, []callerJob]   // by file id, template and scenario
	envs    *lru.Cache[string, map[string]string]
	options *lru.Cache[string, scriptVocab] // a script's options, by file id
}

// NewSweepCache returns an empty cache.
func NewSweepCache() *SweepCache {
	return &SweepCache{
		tmpls:   lru.New[string, *template](1024),
		gens:    lru.New[string, sweepGenerator](16),
		runners: lru.New[string, parsedRunners](16),
		jobs:    lru.New[string, []callerJob](1024),
		envs:    lru.New[string, map[string]string](1 << 14),
		options: lru.New[string, scriptVocab](4096),
	}
}

// UseSweepCache makes the revision read its generator and workflow
// through c.
func (r *Rev) UseSweepCache(c *SweepCache) { r.sweep = c }

// callerJob is a job that runs the template over a matrix of points.
type callerJob struct {
	file string // its workflow file's name
	job  int    // its place among the file's jobs
	with []wfVar
	sig  string // with:, for a cache key
}

// jobs are the jobs that run the template over a matrix of the
// scenario's points: the sweep's (run-sweep.yml) when it has any, else
// those of every workflow (the per-length schedulers of 2025).
func (w *pointWorkflow) jobs(scenario string) []callerJob {
	if c, ok := w.callers[scenario]; ok {
		return c
	}
	var out []callerJob
	if slices.Contains(w.names, "run-sweep.yml") {
		out = w.jobsIn("run-sweep.yml", scenario)
	}
	if out == nil {
		for _, name := range w.names {
			if name != w.tmpl && name != "run-sweep.yml" {
				out = append(out, w.jobsIn(name, scenario)...)
			}
		}
	}
	w.callers[scenario] = out
	return out
}

func (w *pointWorkflow) jobsIn(name, scenario string) []callerJob {
	key := ""
	if id := w.fileID(name); id != "" && w.cache != nil {
		{
			key = id + "\x00" + w.tmpl + "\x00" + scenario
			if out, hit := w.cache.jobs.Get(key); hit {
				if out != nil {
					w.use(name)
				}
				return out
			}
		}
	}
	out := w.readJobs(name, scenario)
	if key != "" {
		w.cache.jobs.Put(key, out)
	}
	if out != nil {
		w.use(name)
	}
	return out
}

func (w *pointWorkflow) readJobs(name, scenario string) []callerJob {
	jobs := child(w.doc(name), "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return nil
	}
	var out []callerJob
	for i := 1; i < len(jobs.Content); i += 2 {
		job := jobs.Content[i]
		uses := child(job, "uses")
		if uses == nil || path.Base(uses.Value) != w.tmpl {
			continue
		}
		with := pairs(child(job, "with"))
		matrix, agentic := false, false
		for _, v := range with {
			matrix = matrix || strings.Contains(v.value, "matrix.config")
			agentic = agentic || v.name == "scenario-type" && strings.Contains(v.value, "agentic")
		}
		if matrix && agentic == (scenario == "agentic-coding") {
			var sig strings.Builder
			for _, v := range with {
				fmt.Fprintf(&sig, "%q %q\n", v.name, v.value)
			}
			out = append(out, callerJob{file: name, job: i / 2, with: with, sig: sig.String()})
		}
	}
	return out
}

// jobFor is the job whose matrix holds the point. A job's matrix comes
// from what a run computes (a generator's output), so it is told by the
// values the job passes as written: the job whose literal inputs agree
// most with the point's fields (exp-name "dsr1_1k8k", isl 1024) runs it,
// the first on a tie (the sweep's jobs by sequence length pass the same
// inputs). Nil without jobs.
func jobFor(jobs []callerJob, matrix *ghexpr.Object) *callerJob {
	var best *callerJob
	bestScore := -1
	for i := range jobs {
		score := 0
		for _, v := range jobs[i].with {
			if strings.Contains(v.value, "${{") {
				continue
			}
			if f, ok := matrix.Get(v.name); ok && ghexpr.String(f) == v.value {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = &jobs[i], score
		}
	}
	return best
}
