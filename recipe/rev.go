package recipe

import (
	"bytes"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe/lint"
	"github.com/perflog/perflog/recipe/revfs"
)

// MasterFiles reads the master config files of a revision, trying each
// layout of the settings (configs/ first, then .github/configs/ where the
// InferenceX configs lived before #1992). A layout is used when any of its
// files exists; a missing file has nil Data (config.LoadMaster reports it).
func MasterFiles(f fs.FS, s *config.Settings) ([]config.File, error) {
	cands := s.MasterCandidates()
	for _, layout := range cands {
		var files []config.File
		found := false
		for _, p := range layout {
			data, ok, err := revfs.ReadFile(f, p)
			if err != nil {
				return nil, err
			}
			if ok && data == nil {
				data = []byte{}
			}
			found = found || ok
			files = append(files, config.File{Path: p, Data: data})
		}
		if found {
			return files, nil
		}
	}
	files := make([]config.File, 0, len(cands[0]))
	for _, p := range cands[0] {
		files = append(files, config.File{Path: p})
	}
	return files, nil
}

// Rev is one revision of a recipe repository as the diff-aware checks
// read it: its master configs (parsed recipe by recipe, only as far as
// asked), the key → script resolution, and parsed scripts. Not safe for
// concurrent use.
type Rev struct {
	Name     string
	Files    fs.FS
	Settings *config.Settings

	loaded  bool
	loadErr error
	files   []config.File
	blocks  map[string]blockAt // nil when a file cannot be read block-wise
	keys    []string
	full    *config.Master
	fullErr error
	parsed  map[string]*config.Recipe

	res     *config.Resolver
	resErr  error
	resDone bool
	scripts map[string]*lint.Script
	srcMemo map[string][]string
	gen     *sweepGenerator // generator(), once read
	wf      *pointWorkflow  // workflow(), once read
	wfRead  bool
	mwf     *pointWorkflow // multinodeWorkflow(), once read
	mwfRead bool
	sweep   *SweepCache
	options map[string]bool  // Options(), once read
	engines map[string]uint8 // the engines of the scripts that pass each option
}

type blockAt struct {
	file string
	b    config.Block
}

// NewRev reads a revision through f.
func NewRev(name string, f fs.FS, s *config.Settings) *Rev {
	return &Rev{Name: name, Files: f, Settings: s, parsed: map[string]*config.Recipe{}, scripts: map[string]*lint.Script{}}
}

// UseMaster hands the revision master configs already parsed whole.
func (r *Rev) UseMaster(m *config.Master, err error) {
	r.full, r.fullErr = m, err
}

func (r *Rev) load() error {
	if r.loaded {
		return r.loadErr
	}
	r.loaded = true
	r.files, r.loadErr = MasterFiles(r.Files, r.Settings)
	if r.loadErr != nil {
		return r.loadErr
	}
	blocks := map[string]blockAt{}
	var keys []string
	for _, f := range r.files {
		if f.Data == nil {
			continue // LoadMaster says why
		}
		bs, ok := config.SplitBlocks(f.Data)
		if !ok {
			blocks = nil
			break
		}
		for _, b := range bs {
			if _, dup := blocks[b.Key]; !dup {
				keys = append(keys, b.Key)
			}
			blocks[b.Key] = blockAt{f.Path, b} // the last one wins, as in PyYAML
		}
	}
	r.blocks, r.keys = blocks, keys
	return nil
}

// Master parses the master configs whole (config.LoadMaster's checks).
func (r *Rev) Master() (*config.Master, error) {
	if r.full == nil && r.fullErr == nil {
		if err := r.load(); err != nil {
			r.fullErr = err
		} else {
			r.full, r.fullErr = config.LoadMaster(r.files)
		}
	}
	return r.full, r.fullErr
}

// Keys returns the recipe keys in load order.
func (r *Rev) Keys() ([]string, error) {
	if r.full != nil {
		return r.full.Keys, nil
	}
	if err := r.load(); err != nil {
		return nil, err
	}
	if r.blocks == nil {
		m, err := r.Master()
		if err != nil {
			return nil, err
		}
		return m.Keys, nil
	}
	return r.keys, nil
}

// Text returns the text of a recipe's block ("" when the files cannot be
// read block-wise or the key does not exist).
func (r *Rev) Text(key string) (file string, text []byte, ok bool) {
	if r.load() != nil || r.blocks == nil {
		return "", nil, false
	}
	b, ok := r.blocks[key]
	return b.file, b.b.Text, ok
}

// Recipe returns a recipe; ok is false when the key does not exist.
func (r *Rev) Recipe(key string) (rec *config.Recipe, ok bool, err error) {
	if rec, ok := r.parsed[key]; ok {
		return rec, rec != nil, nil
	}
	defer func() {
		if err == nil {
			r.parsed[key] = rec
		}
	}()
	if r.full != nil {
		rec := r.full.Recipes[key]
		return rec, rec != nil, nil
	}
	if err := r.load(); err != nil {
		return nil, false, err
	}
	if r.blocks != nil {
		b, ok := r.blocks[key]
		if !ok {
			return nil, false, nil
		}
		if rec, err := config.ParseBlock(b.file, b.b); err == nil {
			return rec, true, nil
		}
		// a block that does not parse alone: parse the files whole
	}
	m, err := r.Master()
	if err != nil {
		return nil, false, err
	}
	rec = m.Recipes[key]
	return rec, rec != nil, nil
}

// Resolver returns the key → script resolver of the revision.
func (r *Rev) Resolver() (*config.Resolver, error) {
	if !r.resDone {
		r.resDone = true
		r.res, r.resErr = newResolver(r.Files, r.Settings, r.sweep)
	}
	return r.res, r.resErr
}

// Runs resolves a recipe to the scripts that run it (nil when the key
// does not exist).
func (r *Rev) Runs(key string) ([]config.Resolution, error) {
	rec, ok, err := r.Recipe(key)
	if err != nil || !ok {
		return nil, err
	}
	res, err := r.Resolver()
	if err != nil {
		return nil, err
	}
	return res.Resolve(rec), nil
}

// Script returns a parsed script (nil when the file does not exist).
func (r *Rev) Script(p string) (*lint.Script, error) {
	if s, ok := r.scripts[p]; ok {
		return s, nil
	}
	data, ok, err := revfs.ReadFile(r.Files, p)
	if err != nil {
		return nil, err
	}
	var s *lint.Script
	if ok {
		s = lint.Parse(p, data)
	}
	r.scripts[p] = s
	return s, nil
}

// Drivers lists the scripts and srt-slurm recipe files that run a
// recipe: the files whose change is a change of the recipe.
func (r *Rev) Drivers(key string) ([]string, error) {
	runs, err := r.Runs(key)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, run := range runs {
		for _, p := range []string{run.Script, run.Recipe} {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Related lists the files that run a recipe at the revision, in the order
// a reader would look: the master config holding it, the scripts and
// recipe files the launchers run (with the files they source), and the
// launchers. Drivers are the scripts and srt-slurm recipe files alone:
// the files whose change is a change of the recipe.
func (r *Rev) Related(key string) (all, drivers []string, err error) {
	runs, err := r.Runs(key)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	add := func(list *[]string, p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			*list = append(*list, p)
		}
	}
	if rec, ok, _ := r.Recipe(key); ok {
		add(&all, rec.File)
	}
	var libs, launchers []string
	for _, run := range runs {
		for _, p := range []string{run.Script, run.Recipe} {
			if p == "" || seen[p] {
				continue
			}
			add(&all, p)
			drivers = append(drivers, p)
			if strings.HasSuffix(p, ".sh") {
				for _, lib := range r.sources(p, 0, map[string]bool{p: true}) {
					add(&libs, lib)
				}
			}
		}
		if run.Family != "" {
			add(&launchers, "runners/launch_"+run.Family+".sh")
		}
	}
	all = append(all, libs...)
	for _, l := range launchers {
		if revfs.Exists(r.Files, l) {
			all = append(all, l)
		}
	}
	return all, drivers, nil
}

// sources returns the files a script sources, transitively (depth ≤ 3).
// It reads `source FILE` and `. FILE` lines as text: finding them must
// not cost a parse of every library (benchmark_lib.sh is 2000 lines).
func (r *Rev) sources(p string, depth int, seen map[string]bool) []string {
	if depth > 3 {
		return nil
	}
	var out []string
	for _, q := range r.sourced(p) {
		if q == "" || seen[q] {
			continue
		}
		seen[q] = true
		out = append(out, q)
		out = append(out, r.sources(q, depth+1, seen)...)
	}
	return out
}

// sourced returns the files a script sources directly (memoised).
func (r *Rev) sourced(p string) []string {
	if l, ok := r.srcMemo[p]; ok {
		return l
	}
	var out []string
	if data, ok, err := revfs.ReadFile(r.Files, p); err == nil && ok {
		for _, m := range reSource.FindAllSubmatch(data, -1) {
			if q := r.resolveSource(p, strings.TrimSpace(string(m[1]))); q != "" {
				out = append(out, q)
			}
		}
	}
	if r.srcMemo == nil {
		r.srcMemo = map[string][]string{}
	}
	r.srcMemo[p] = out
	return out
}

var reSource = regexp.MustCompile(`(?m)^[ \t]*(?:source|\.)[ \t]+([^\n;&|#]+)`)

var unquote = strings.NewReplacer(`"`, "", `'`, "")

// resolveSource finds the repository file a `source WORD` names: the
// literal tail of WORD after its last expansion, relative to the script's
// directory ("$(dirname "$0")/../benchmark_lib.sh") or to the repository
// root ("$GITHUB_WORKSPACE/benchmarks/benchmark_lib.sh"), else a file of
// that name in the script's directory or above.
func (r *Rev) resolveSource(script, word string) string {
	w := unquote.Replace(word)
	tail := w
	if i := strings.LastIndexAny(w, ")}"); i >= 0 {
		tail = w[i+1:]
	} else if i := strings.LastIndexByte(w, '$'); i >= 0 {
		rest := w[i:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return ""
		}
		tail = rest[j:]
	}
	if strings.ContainsAny(tail, "$`*?") || tail == "" || strings.HasSuffix(tail, "/") {
		return ""
	}
	dir := path.Dir(script)
	var cands []string
	if strings.HasPrefix(tail, "/") && tail == w { // an absolute path in the container
		for _, pre := range []string{"/workspace/", "/"} {
			if strings.HasPrefix(tail, pre) {
				cands = append(cands, strings.TrimPrefix(tail, pre))
			}
		}
	} else {
		cands = append(cands, path.Clean(path.Join(dir, tail)), path.Clean(strings.TrimPrefix(tail, "/")))
	}
	base := path.Base(tail)
	for d := dir; ; d = path.Dir(d) {
		cands = append(cands, path.Join(d, base))
		if d == "." || d == "/" {
			break
		}
	}
	for _, c := range cands {
		if !strings.HasPrefix(c, "../") && revfs.Exists(r.Files, c) {
			return c
		}
	}
	return ""
}

// NewResolver builds the key → script resolver of a revision: the runner
// labels (configs/runners.yaml) and the launchers (runners/).
func NewResolver(f fs.FS, s *config.Settings) (*config.Resolver, error) {
	return newResolver(f, s, nil)
}

// parsedRunners is ParseRunners' answer, kept in a SweepCache.
type parsedRunners struct {
	rs  *config.Runners
	err error
}

func newResolver(f fs.FS, s *config.Settings, c *SweepCache) (*config.Resolver, error) {
	var runners *config.Runners
	var cache *lru.Cache[string, parsedRunners]
	if c != nil {
		cache = c.runners
	}
	for _, p := range s.RunnersCandidates() {
		pr, ok := readShared(f, cache, p, func(data []byte) parsedRunners {
			rs, err := config.ParseRunners(data)
			return parsedRunners{rs, err}
		})
		if ok {
			if pr.err != nil {
				return nil, pr.err
			}
			runners = pr.rs
			break
		}
	}
	launchers, err := revfs.ListFiles(f, "runners")
	if err != nil {
		return nil, err
	}
	return config.NewResolver(s, runners, launchers, func(p string) bool { return revfs.Exists(f, p) })
}

// Images returns the container images a recipe runs: its image field and
// the container fields of its srt-slurm recipe files, each with the file
// and line it is written at.
func (r *Rev) Images(key string) []Located {
	rec, ok, err := r.Recipe(key)
	if err != nil || !ok {
		return nil
	}
	var out []Located
	if image, line, ok := rec.StrAt("image"); ok {
		out = append(out, Located{File: rec.File, Line: line, Text: image})
	}
	runs, _ := r.Runs(key)
	seen := map[string]bool{}
	for _, run := range runs {
		if run.Recipe == "" || seen[run.Recipe] {
			continue
		}
		seen[run.Recipe] = true
		data, ok, err := revfs.ReadFile(r.Files, run.Recipe)
		if err != nil || !ok {
			continue
		}
		v, err := pyyaml.Load(data, pyyaml.Options{})
		if err != nil {
			continue
		}
		walkStrings(v, func(field string, s *pyyaml.Value) {
			if field == "container" || field == "image" || strings.HasSuffix(field, "_image") || strings.HasSuffix(field, "-image") {
				out = append(out, Located{File: run.Recipe, Line: s.Line, Text: s.Str})
			}
		})
	}
	return out
}

// Located is a value with the file and line it is written at.
type Located struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func walkStrings(v *pyyaml.Value, fn func(field string, s *pyyaml.Value)) {
	switch v.Kind {
	case pyyaml.Map:
		for _, p := range v.Pairs {
			if p.Value.Kind == pyyaml.Str && p.Key.Kind == pyyaml.Str {
				fn(p.Key.Str, p.Value)
			} else {
				walkStrings(p.Value, fn)
			}
		}
	case pyyaml.Seq:
		for _, it := range v.Items {
			walkStrings(it, fn)
		}
	}
}

// LineText is line n of a file of the revision, trimmed ("" when
// unreadable).
func (r *Rev) LineText(file string, n int) string {
	data, ok, err := revfs.ReadFile(r.Files, file)
	if err != nil || !ok || n < 1 {
		return ""
	}
	for i := 1; ; i++ {
		l, rest, more := bytes.Cut(data, []byte{'\n'})
		if i == n {
			return strings.TrimSpace(string(l))
		}
		if !more {
			return ""
		}
		data = rest
	}
}

// SplitAt splits a "file:line" location (line 0 when it has none).
func SplitAt(at string) (file string, line int) {
	i := strings.LastIndexByte(at, ':')
	if i < 0 {
		return at, 0
	}
	n, err := strconv.Atoi(at[i+1:])
	if err != nil {
		return at, 0
	}
	return at[:i], n
}
