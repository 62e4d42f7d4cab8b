package recipe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"io/fs"

	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/ghexpr"
	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/recipe/dryrun"
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
//     matrix of points (run-sweep.yml today), one for fixed-seq-len
//     points and one for agentic ones, with the inputs they pass
//     (`tp: ${{ matrix.config.tp }}`).
//
// A point's environment is then evaluated the way a run evaluates it
// (internal/ghexpr): the point is matrix.config, as the generator writes
// it; secrets are "<secret>"; a name no point gives (github.sha,
// vars.X) is "<unknown:NAME>". A revision without such a workflow, or
// one read here only in part, gets the embedded table (pointEnv).
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
	env    []wfVar // the workflow's env:
	step   []wfVar // the launch step's env:
	run    string  // the launch step's script
	sig    string  // all of the above, for a cache key

	mu      sync.Mutex
	scripts map[string][]*syntax.Stmt // run as interpolated → its statements before the launcher
}

// readTemplate reads a template from its parsed file (nil: the file is
// no single-node template).
func readTemplate(name string, doc *yaml.Node) *template {
	if doc == nil || strings.Contains(name, "multinode") || child(child(doc, "on"), "workflow_call") == nil || launchStep(doc) == nil {
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

type wfInput struct {
	name, typ, def string
	hasDef         bool
}

type wfVar struct{ name, value string }

const workflowDir = ".github/workflows"

// workflow is the revision's point workflow, read once (nil: none).
func (r *Rev) workflow() *pointWorkflow {
	if !r.wfRead {
		r.wf, r.wfRead = readPointWorkflow(r.Files, r.sweep), true
	}
	return r.wf
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

func readPointWorkflow(files fs.FS, cache *SweepCache) *pointWorkflow {
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
	for _, name := range append([]string{templateName}, w.names...) {
		if !slices.Contains(w.names, name) {
			continue
		}
		if t := w.readTemplate(name); t != nil {
			w.template = t
			w.use(name)
			return w
		}
	}
	return nil
}

// readTemplate is the file as a template, read once per content.
func (w *pointWorkflow) readTemplate(name string) *template {
	id := w.fileID(name)
	if id != "" && w.cache != nil {
		if t, ok := w.cache.tmpls.Get(id); ok {
			return t
		}
	}
	t := readTemplate(name, w.doc(name))
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
	if data, ok, err := revfs.ReadFile(w.inner, workflowDir+"/"+name); err == nil && ok {
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

// SweepCache keeps what the revisions of a history share of the
// machinery that turns a recipe into points: the sweep generator,
// runners.yaml and the workflow files parsed by content, and the environments of points by
// workflow and point. A history walk owns one and hands it to each
// revision (Rev.UseSweepCache); it is safe for concurrent use.
// Without it a walk parses the same workflow files again at each
// commit it dry-runs (docs/dev/performance.md).
type SweepCache struct {
	tmpls   *lru.Cache[string, *template] // by file id (nil: not a template)
	gens    *lru.Cache[string, sweepGenerator]
	runners *lru.Cache[string, parsedRunners] // runners.yaml
	jobs    *lru.Cache[string, []callerJob]   // by file id, template and scenario
	envs    *lru.Cache[string, map[string]string]
}

// NewSweepCache returns an empty cache.
func NewSweepCache() *SweepCache {
	return &SweepCache{tmpls: lru.New[string, *template](1024), gens: lru.New[string, sweepGenerator](16), runners: lru.New[string, parsedRunners](16), jobs: lru.New[string, []callerJob](1024), envs: lru.New[string, map[string]string](1 << 14)}
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

// beforeLauncher parses the launch step's script, its `${{ }}` already
// replaced (a run replaces them before the shell reads the script), and
// keeps its statements before the one that starts the launcher.
func (w *template) beforeLauncher(script string) ([]*syntax.Stmt, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if st, ok := w.scripts[script]; ok {
		return st, nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "run")
	if err != nil {
		return nil, fmt.Errorf("does not parse: %v", err)
	}
	var out []*syntax.Stmt
	for _, st := range f.Stmts {
		var b bytes.Buffer
		_ = syntax.NewPrinter().Print(&b, st)
		if strings.Contains(b.String(), "runners/launch_") {
			if len(w.scripts) < 64 {
				w.scripts[script] = out
			}
			return out, nil
		}
		out = append(out, st)
	}
	return nil, fmt.Errorf("starts no launcher")
}

// evalContext gives a run's contexts for one point.
type evalContext struct {
	matrix, inputs, env *ghexpr.Object
	runner              string
}

func (c *evalContext) lookup(name string) (any, bool) {
	switch name {
	case "matrix":
		return c.matrix, c.matrix != nil
	case "inputs":
		return c.inputs, c.inputs != nil
	case "env":
		return c.env, c.env != nil
	case "secrets": // a secret's value is nothing perflog reads or shows
		return ghexpr.Lookup(func(string) any { return "<secret>" }), true
	case "github":
		// the run perflog models: a full sweep, not a pull request's
		// event (no labels); what a run alone knows stays unknown
		return ghexpr.Lookup(func(name string) any {
			switch name {
			case "event":
				return &ghexpr.Object{}
			case "workspace":
				return dryrun.Workspace
			}
			return ghexpr.Unknown{Name: "github." + name}
		}), true
	case "runner":
		o := &ghexpr.Object{}
		o.Set("name", c.runner)
		return o, true
	}
	return nil, false
}

// typed is an input's value as its type makes it.
func typed(typ string, v any) any {
	switch typ {
	case "boolean":
		if s, ok := v.(string); ok {
			return strings.EqualFold(s, "true")
		}
		if _, ok := v.(ghexpr.Unknown); ok {
			return v
		}
		return ghexpr.Truthy(v)
	case "number":
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return f
			}
			return 0.0
		}
		return v
	}
	if _, ok := v.(ghexpr.Unknown); ok {
		return v
	}
	return ghexpr.String(v)
}

// value evaluates a scalar of the workflow: a single `${{ expr }}`
// keeps the expression's type, anything else is a string.
func value(raw string, ctx ghexpr.Context) (any, error) {
	t := strings.TrimSpace(raw)
	if strings.HasPrefix(t, "${{") && strings.HasSuffix(t, "}}") && strings.Count(t, "${{") == 1 {
		return ghexpr.Eval(t[3:len(t)-2], ctx)
	}
	s, _, err := ghexpr.Interpolate(raw, ctx)
	return s, err
}

// cachedEnv is pointEnv through the cache (a copy: callers change it).
func (w *pointWorkflow) cachedEnv(scenario string, matrix *ghexpr.Object, runner string) (map[string]string, error) {
	if w.cache == nil {
		return w.pointEnv(scenario, matrix, runner)
	}
	job := jobFor(w.jobs(scenario), matrix)
	caller := ""
	if job != nil {
		caller = job.sig
	}
	// by what decides the environment, not by file: most changes of the
	// sweep's file leave the jobs' inputs as they were
	key := w.sig + "\x00" + caller + "\x00" + scenario + "\x00" + runner + "\x00" + ghexpr.ToJSON(matrix)
	if env, ok := w.cache.envs.Get(key); ok {
		return maps.Clone(env), nil
	}
	env, err := w.pointEnv(scenario, matrix, runner)
	if err == nil {
		w.cache.envs.Put(key, maps.Clone(env))
	}
	return env, err
}

// env is the environment the workflow gives the point's launcher:
// matrix is the point as the generator writes it.
func (w *pointWorkflow) pointEnv(scenario string, matrix *ghexpr.Object, runner string) (map[string]string, error) {
	c := &evalContext{matrix: &ghexpr.Object{}, inputs: &ghexpr.Object{}, env: &ghexpr.Object{}, runner: runner}
	c.matrix.Set("config", matrix)
	with := map[string]string{}
	var callers []wfVar
	if job := jobFor(w.jobs(scenario), matrix); job != nil {
		callers = job.with
	}
	for _, v := range callers {
		with[v.name] = v.value
	}
	for _, in := range w.inputs {
		raw, passed := with[in.name]
		var v any
		switch {
		case passed:
			x, err := value(raw, c.lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: input %s: %v", w.file, in.name, err)
			}
			v = x
		case callers == nil: // no caller read: the point's field of the same name
			if x, ok := matrix.Get(in.name); ok {
				v = x
			} else if in.hasDef {
				v = in.def
			}
		case in.hasDef:
			v = in.def
		}
		c.inputs.Set(in.name, typed(in.typ, v))
	}
	c.matrix = nil // the template sees its inputs, not the caller's matrix
	env := map[string]string{}
	set := func(vars []wfVar) error {
		for _, v := range vars {
			s, _, err := ghexpr.Interpolate(v.value, c.lookup)
			if err != nil {
				return fmt.Errorf("%s: env %s: %v", w.file, v.name, err)
			}
			env[v.name] = s
		}
		return nil
	}
	if err := set(w.env); err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(env) {
		c.env.Set(k, env[k])
	}
	if err := set(w.step); err != nil {
		return nil, err
	}
	script, _, err := ghexpr.Interpolate(w.run, c.lookup)
	if err == nil {
		var stmts []*syntax.Stmt
		if stmts, err = w.beforeLauncher(script); err == nil {
			err = runExports(stmts, env)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the launch step's script: %v", w.file, err)
	}
	return env, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runExports applies the launch step's assignments to env: `X=word`,
// `export X=word`, and `if [ -n/-z word ]` or `[ a = b ]` around them;
// words are expanded by mvdan.cc/sh's expand package with env alone (no
// command substitution, no globbing, no ~user). `echo ... >> file` has
// no effect on the launcher. Anything else is an error: the script
// does what is not read here.
func runExports(stmts []*syntax.Stmt, env map[string]string) error {
	cfg := &expand.Config{Env: expand.FuncEnviron(func(name string) string { return env[name] })}
	word := func(w *syntax.Word) (string, error) {
		if w == nil {
			return "", nil
		}
		var bad error
		syntax.Walk(w, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Lit:
				if strings.Contains(x.Value, "~") {
					bad = fmt.Errorf("a ~ in %q", x.Value)
				}
			case *syntax.CmdSubst, *syntax.ProcSubst:
				bad = fmt.Errorf("a command substitution")
			}
			return bad == nil
		})
		if bad != nil {
			return "", bad
		}
		return expand.Literal(cfg, w)
	}
	var run func([]*syntax.Stmt) error
	run = func(stmts []*syntax.Stmt) error {
		for _, st := range stmts {
			if st.Negated || st.Background || st.Coprocess {
				return fmt.Errorf("line %d: not read", st.Pos().Line())
			}
			switch x := st.Cmd.(type) {
			case *syntax.CallExpr:
				if len(x.Args) == 0 {
					for _, a := range x.Assigns {
						if err := assign(a, env, word); err != nil {
							return err
						}
					}
					continue
				}
				name, err := word(x.Args[0])
				if err != nil {
					return err
				}
				if name == "echo" || name == "printf" || name == ":" || name == "true" {
					continue // output only (the launcher's environment is unchanged)
				}
				return fmt.Errorf("line %d: %s is not read", st.Pos().Line(), name)
			case *syntax.DeclClause:
				if x.Variant.Value != "export" {
					return fmt.Errorf("line %d: %s is not read", st.Pos().Line(), x.Variant.Value)
				}
				for _, a := range x.Args {
					if err := assign(a, env, word); err != nil {
						return err
					}
				}
			case *syntax.IfClause:
				for c := x; c != nil; c = c.Else {
					ok := true
					if len(c.Cond) > 0 {
						var err error
						if ok, err = test(c.Cond, word); err != nil {
							return err
						}
					}
					if ok {
						if err := run(c.Then); err != nil {
							return err
						}
						break
					}
				}
			default:
				return fmt.Errorf("line %d: not read", st.Pos().Line())
			}
		}
		return nil
	}
	return run(stmts)
}

func assign(a *syntax.Assign, env map[string]string, word func(*syntax.Word) (string, error)) error {
	if a.Name == nil || a.Array != nil || a.Index != nil || a.Append {
		return fmt.Errorf("an assignment not read")
	}
	if a.Naked { // `export X`: the variable as it is
		return nil
	}
	v, err := word(a.Value)
	if err != nil {
		return err
	}
	env[a.Name.Value] = v
	return nil
}

// test reads `[ -n w ]`, `[ -z w ]`, `[ a = b ]` and `[ a != b ]`.
func test(cond []*syntax.Stmt, word func(*syntax.Word) (string, error)) (bool, error) {
	if len(cond) != 1 {
		return false, fmt.Errorf("a condition not read")
	}
	call, ok := cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) < 3 || cond[0].Negated {
		return false, fmt.Errorf("a condition not read")
	}
	var args []string
	for _, w := range call.Args {
		s, err := word(w)
		if err != nil {
			return false, err
		}
		args = append(args, s)
	}
	if args[0] != "[" || args[len(args)-1] != "]" {
		return false, fmt.Errorf("a condition not read")
	}
	args = args[1 : len(args)-1]
	switch {
	case len(args) == 2 && args[0] == "-n":
		return args[1] != "", nil
	case len(args) == 2 && args[0] == "-z":
		return args[1] == "", nil
	case len(args) == 3 && (args[1] == "=" || args[1] == "=="):
		return args[0] == args[2], nil
	case len(args) == 3 && args[1] == "!=":
		return args[0] != args[2], nil
	}
	return false, fmt.Errorf("a condition not read: [ %s ]", strings.Join(args, " "))
}

// setPointEnv sets p.Env: what the revision's workflow gives the point,
// else perflog's table of today's workflow.
func (r *Rev) setPointEnv(rec *config.Recipe, e *config.Entry, p *LaunchPoint, label, dram string, duration int64) {
	table := pointEnv(rec, e, p, label, dram, r.generator(), duration)
	w := r.workflow()
	why := "no workflow runs a launcher"
	if w != nil {
		env, err := w.cachedEnv(p.Scenario, matrixConfig(rec, e, p, label, table), p.Runner)
		if err == nil {
			// what the runner itself sets
			for _, k := range runnerOwn {
				if _, ok := env[k]; !ok {
					env[k] = table[k]
				}
			}
			if _, ok := env["RUNNER_NAME"]; !ok {
				env["RUNNER_NAME"] = p.Runner // GitHub's own variable
			}
			for _, k := range runnerFiles {
				if _, ok := env[k]; ok { // the runner's value wins over the workflow's
					env[k] = dryrun.UnknownMarker + "github." + strings.ToLower(strings.TrimPrefix(k, "GITHUB_")) + ">"
				}
			}
			p.Env, p.EnvFrom = env, w.file
			return
		}
		why = err.Error()
	}
	if p.Scenario == "fixed-seq-len" && p.Script != "" && !strings.Contains(p.Script, "/fixed_seq_len/") {
		// the layout before #1571: the workflow of the day set no
		// scenario directory
		table["SCENARIO_SUBDIR"] = ""
	}
	p.Env, p.EnvFrom = table, "perflog's table of the workflow ("+why+")"
}

// runnerFiles are the files the runner gives a step (GITHUB_STEP_SUMMARY):
// it sets them after the workflow's env, which cannot change them.
var runnerFiles = []string{"GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STATE"}

// runnerOwn are the variables a runner's machine sets, not the workflow.
var runnerOwn = []string{"USER", "HOME", "PATH", "GITHUB_WORKSPACE", "GITHUB_ACTIONS"}

// matrixConfig is the point as the sweep generator writes it (the
// matrix.config its workflow reads), with the fields of every era the
// workflows read (`offloading` before #1992).
func matrixConfig(rec *config.Recipe, e *config.Entry, p *LaunchPoint, label string, table map[string]string) *ghexpr.Object {
	o := &ghexpr.Object{}
	num := func(n int64) float64 { return float64(n) }
	o.Set("image", rec.Image)
	o.Set("model", rec.Model)
	o.Set("model-prefix", rec.ModelPrefix)
	o.Set("precision", rec.Precision)
	o.Set("framework", rec.Framework)
	o.Set("runner", label)
	agentic := p.Scenario == "agentic-coding"
	if !agentic {
		o.Set("isl", num(p.ISL))
		o.Set("osl", num(p.OSL))
	}
	o.Set("tp", num(p.TP))
	o.Set("pp", num(e.PP.Or(1)))
	o.Set("dcp-size", num(e.DCP.Or(1)))
	o.Set("pcp-size", num(e.PCP.Or(1)))
	o.Set("ep", num(p.EP))
	o.Set("dp-attn", p.DPAttn)
	o.Set("spec-decoding", p.Spec)
	o.Set("conc", num(p.Conc))
	if !agentic {
		if n, err := strconv.ParseInt(table["MAX_MODEL_LEN"], 10, 64); err == nil {
			o.Set("max-model-len", num(n))
		}
	}
	o.Set("exp-name", table["EXP_NAME"])
	o.Set("disagg", false)
	o.Set("run-eval", false)
	if agentic {
		o.Set("kv-offloading", p.KVOffloading)
		if e.LegacyOffloading {
			o.Set("offloading", p.KVOffloading)
		}
		if n, err := strconv.ParseInt(table["TOTAL_CPU_DRAM_GB"], 10, 64); err == nil {
			o.Set("total-cpu-dram-gb", num(n))
		}
		if d, err := strconv.ParseInt(table["DURATION"], 10, 64); err == nil {
			o.Set("duration", num(d))
		}
		o.Set("scenario-type", "agentic-coding")
	}
	for _, f := range []string{"kv-offload-backend", "router", "kv-p2p-transfer"} {
		js, ok := e.Components[f]
		if !ok && f != "kv-offload-backend" {
			js, ok = rec.Component(f)
		}
		if !ok {
			continue
		}
		if v, err := ghexpr.FromJSON(js); err == nil {
			o.Set(f, v)
		}
	}
	return o
}
