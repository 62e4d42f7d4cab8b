package recipe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/ghexpr"
	"github.com/perflog/perflog/recipe/dryrun"
)

// A point's environment under its workflow (pointWorkflow), evaluated the
// way a run evaluates it (internal/ghexpr): the point is matrix.config as
// the generator writes it; inputs take their types and defaults; secrets
// are "<secret>"; the run perflog models is a full sweep (no pull
// request's labels); a name only a run knows (github.sha, vars.X) is
// "<unknown:NAME>"; the launch step's lines before the launcher are read
// by runExports, never run.

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

// scalarValue evaluates a scalar of the workflow: a single `${{ expr }}`
// keeps the expression's type, anything else is a string.
func scalarValue(raw string, ctx ghexpr.Context) (any, error) {
	t := strings.TrimSpace(raw)
	if strings.HasPrefix(t, "${{") && strings.HasSuffix(t, "}}") && strings.Count(t, "${{") == 1 {
		return ghexpr.Eval(t[3:len(t)-2], ctx)
	}
	s, _, err := ghexpr.Interpolate(raw, ctx)
	return s, err
}

// cachedEnv is pointEnv through the cache (a copy: callers change it).
func (w *pointWorkflow) cachedEnv(scenario string, matrix *ghexpr.Object, runner string) (map[string]string, error) {
	job := jobFor(w.jobs(scenario), matrix)
	if w.cache == nil {
		return w.pointEnv(job, matrix, runner)
	}
	caller := ""
	if job != nil {
		caller = job.sig
	}
	// by what decides the environment, not by file: most changes of the
	// sweep's file leave the jobs' inputs as they were
	var b strings.Builder
	b.WriteString(w.sig + "\x00" + caller + "\x00" + scenario + "\x00" + runner)
	for _, k := range matrix.Keys { // the point's fields; a nested one as JSON
		b.WriteString("\x00" + k + "=" + ghexpr.String(matrix.Vals[k]))
	}
	key := b.String()
	if env, ok := w.cache.envs.Get(key); ok {
		return maps.Clone(env), nil
	}
	env, err := w.pointEnv(job, matrix, runner)
	if err == nil {
		w.cache.envs.Put(key, maps.Clone(env))
	}
	return env, err
}

// pointEnv is the environment the workflow gives the point's launcher
// when job runs it (nil: no caller was found); matrix is the point as the
// generator writes it.
func (w *pointWorkflow) pointEnv(job *callerJob, matrix *ghexpr.Object, runner string) (map[string]string, error) {
	c := &evalContext{matrix: &ghexpr.Object{}, inputs: &ghexpr.Object{}, env: &ghexpr.Object{}, runner: runner}
	c.matrix.Set("config", matrix)
	with := map[string]string{}
	var callers []wfVar
	if job != nil {
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
			x, err := scalarValue(raw, c.lookup)
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
				if name == "set" && !allexport(x.Args[1:]) {
					continue // the step's own shell options (set -x): not the launcher's
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
						if ok, err = bracketTest(c.Cond, word); err != nil {
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

// allexport says whether set's words may turn allexport on (set -a,
// set -o allexport), or are not plain words.
func allexport(args []*syntax.Word) bool {
	for _, w := range args {
		l := w.Lit()
		if l == "" || l == "allexport" || (strings.HasPrefix(l, "-") && strings.Contains(l, "a")) {
			return true
		}
	}
	return false
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

// bracketTest reads `[ -n w ]`, `[ -z w ]`, `[ a = b ]` and `[ a != b ]`.
func bracketTest(cond []*syntax.Stmt, word func(*syntax.Word) (string, error)) (bool, error) {
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
	if p.Multinode {
		r.setMultinodeEnv(rec, e, p, label, table)
		return
	}
	w := r.workflow()
	why := "no workflow runs a launcher"
	if w != nil {
		env, err := w.cachedEnv(p.Scenario, matrixConfig(rec, e, p, label, table), p.Runner)
		if err == nil {
			p.Env, p.EnvFrom, p.EnvConst = runnerEnv(env, p, table), w.file, w.consts
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

// runnerEnv adds to a workflow's environment what the runner itself
// sets.
func runnerEnv(env map[string]string, p *LaunchPoint, table map[string]string) map[string]string {
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
	return env
}

// setMultinodeEnv sets a multi-node point's environment from the
// revision's multi-node workflow; it reports whether it could (there is
// no table of it to fall back on: such a point is not dry-run).
func (r *Rev) setMultinodeEnv(rec *config.Recipe, e *config.Entry, p *LaunchPoint, label string, table map[string]string) bool {
	w := r.multinodeWorkflow()
	if w == nil {
		p.Env, p.EnvFrom = table, "perflog's table of the single-node workflow (no multi-node workflow runs a launcher)"
		return false
	}
	env, err := w.cachedEnv(p.Scenario, multinodeMatrix(rec, e, p, label, table, r.generator()), p.Runner)
	if err != nil {
		p.Env, p.EnvFrom = table, "perflog's table of the single-node workflow ("+err.Error()+")"
		return false
	}
	p.Env, p.EnvFrom, p.EnvConst = runnerEnv(env, p, table), w.file, w.consts
	return true
}

// multinodeMatrix is a multi-node entry as the sweep generator writes it
// for the multi-node workflow: the point's fields with its workers'
// (prefill, decode), the entry's concurrencies as one list, disagg.
func multinodeMatrix(rec *config.Recipe, e *config.Entry, p *LaunchPoint, label string, table map[string]string, gen *sweepGenerator) *ghexpr.Object {
	o := matrixConfig(rec, e, p, label, table)
	side := func(sd *config.Side) any {
		m := map[string]any{"num-worker": sd.Workers.Or(1), "tp": sd.TP.Or(1), "ep": sd.EP.Or(1), "dp-attn": sd.DPAttn.V,
			"pp": sd.PP.Or(1), "dcp-size": sd.DCP.Or(1), "pcp-size": sd.PCP.Or(1)}
		if len(sd.Settings) > 0 {
			m["additional-settings"] = sd.Settings
		}
		return fromGo(m)
	}
	if e.Prefill != nil {
		o.Set("prefill", side(e.Prefill))
	}
	if e.Decode != nil {
		o.Set("decode", side(e.Decode))
	}
	if p.Scenario != "agentic-coding" {
		o.Set("conc", fromGo(e.Conc))
	} else {
		batch := agenticBatch(e.Conc, p.Conc, gen.agenticBatch)
		o.Set("conc", fromGo(batch))
		o.Set("exp-name", multinodeAgenticName(rec.ModelPrefix, e, batch, p))
	}
	disagg := false
	if v, ok := rec.Setting("disagg"); ok {
		disagg = strings.EqualFold(v, "true")
	}
	o.Set("disagg", disagg)
	return o
}

// agenticBatch is the batch of a multi-node agentic row's concurrencies
// that conc runs in: the generator's chunks of size n, in the row's
// order (chunk_multinode_agentic_concurrencies).
func agenticBatch(concs []int64, conc int64, n int) []int64 {
	n = max(n, 1)
	for i := 0; i < len(concs); i += n {
		chunk := concs[i:min(i+n, len(concs))]
		if slices.Contains(chunk, conc) {
			return chunk
		}
	}
	return []int64{conc}
}

// multinodeAgenticName is the generator's exp-name of a multi-node agentic
// entry (multinode_agentic_exp_name): each side's workers, TP, EP and DP
// attention, the batch, and the KV offloading when there is one.
func multinodeAgenticName(prefix string, e *config.Entry, batch []int64, p *LaunchPoint) string {
	tag := func(sd *config.Side, role string) string {
		if sd == nil {
			return role + "?"
		}
		t := fmt.Sprintf("%s%dx%d", role, sd.Workers.Or(1), sd.TP.Or(1))
		if ep := sd.EP.Or(1); ep != 1 {
			t += fmt.Sprintf("ep%d", ep)
		}
		if sd.DPAttn.V {
			t += "dpa"
		}
		return t
	}
	concs := make([]string, len(batch))
	for i, c := range batch {
		concs[i] = strconv.FormatInt(c, 10)
	}
	name := prefix + "_" + tag(e.Prefill, "p") + "_" + tag(e.Decode, "d") + "_conc" + strings.Join(concs, "x")
	if p.KVOffloading != "" && p.KVOffloading != "none" {
		name += "_kv" + p.KVOffloading + "-" + p.KVBackend
	}
	return name
}

// fromGo is a Go value (maps, slices, numbers, strings, bools) as an
// expression's value.
func fromGo(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	x, err := ghexpr.FromJSON(string(b))
	if err != nil {
		return nil
	}
	return x
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
