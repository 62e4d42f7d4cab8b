// Package config models InferenceX recipe configs: the master config files
// (configs/*-master.yaml, merged in order) as typed recipes (Recipe) and
// search spaces (Scenario, Item, Entry, Row), config-key globs, flattening
// a recipe into field paths and diffing two versions of it, generated
// benchmark points, and perflog's own settings file.
//
// config works on bytes handed to it; it never reads git (callers use
// gitscan) and knows nothing about the changelog.
//
// Dependencies: internal/pyyaml (PyYAML semantics), internal/xdiff (the
// structural diff's line diff), gopkg.in/yaml.v3 (the settings file).
// It keeps no cache: what a history reads again (runners.yaml) is kept by
// its caller (recipe.SweepCache).
package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// DefaultMasterFiles are the master config paths, in merge order, of the
// current InferenceX layout; LegacyMasterFiles the layout before #1992.
var (
	DefaultMasterFiles = []string{"configs/amd-master.yaml", "configs/nvidia-master.yaml"}
	LegacyMasterFiles  = []string{".github/configs/amd-master.yaml", ".github/configs/nvidia-master.yaml"}
)

// File is one file's path and content.
type File struct {
	Path string
	Data []byte
}

// Recipe is one top-level entry of a master config: where it is, its
// top-level settings, and its YAML (Raw) for what reads the whole of it
// (its fields, points, rows and diff).
type Recipe struct {
	Key  string
	File string
	Line int
	// the top-level strings ("" when absent or not a string)
	Image, Model, ModelPrefix, Runner, Precision, Framework string
	// Multinode: the multinode setting is truthy (as Python reads it)
	Multinode bool

	v *pyyaml.Value
}

// NewRecipe reads the recipe key, whose value v is at file:line. It is
// the one bridge from YAML a caller parsed itself (the history engine
// cuts master configs into recipes on its own) to the model; everything
// else takes a *Recipe.
func NewRecipe(key, file string, line int, v *pyyaml.Value) *Recipe {
	r := &Recipe{Key: key, File: file, Line: line, v: v}
	if v == nil {
		return r
	}
	str := func(name string) string {
		if x, ok := v.Get(name); ok && x.Kind == pyyaml.Str {
			return x.Str
		}
		return ""
	}
	r.Image, r.Model, r.ModelPrefix = str("image"), str("model"), str("model-prefix")
	r.Runner, r.Precision, r.Framework = str("runner"), str("precision"), str("framework")
	if x, ok := v.Get("multinode"); ok {
		r.Multinode = x.Truthy() // as the incumbent's recipe.get("multinode")
	}
	return r
}

// Similarity is the share of fields r and o have in common once their
// lists are aligned (1 for equal recipes).
func (r *Recipe) Similarity(o *Recipe) float64 { return similarityMemo(r.v, o.v, nil) }

// raw is the recipe's YAML as loaded (PyYAML semantics; nil for a nil
// recipe). Callers must not modify it.
func (r *Recipe) raw() *pyyaml.Value {
	if r == nil {
		return nil
	}
	return r.v
}

// Equal reports whether two recipes hold the same YAML (as PyYAML
// compares values; their keys and places aside).
func (r *Recipe) Equal(o *Recipe) bool {
	if r == nil || o == nil {
		return r == o
	}
	return pyyaml.Equal(r.v, o.v)
}

// Setting returns the recipe's top-level setting name in YAML flow style
// (see Render), and whether the recipe has it.
func (r *Recipe) Setting(name string) (string, bool) {
	if x, ok := r.raw().Get(name); ok {
		return pyyaml.Render(x), true
	}
	return "", false
}

// StrAt returns the recipe's top-level setting name, when it is a
// string, with the line of its value.
func (r *Recipe) StrAt(name string) (s string, line int, ok bool) {
	if x, ok := r.raw().Get(name); ok && x.Kind == pyyaml.Str {
		return x.Str, x.Line, true
	}
	return "", 0, false
}

// Component is a recipe-level component field (router,
// kv-p2p-transfer) as JSON, and whether the recipe has it.
func (r *Recipe) Component(field string) (string, bool) {
	if x, ok := r.v.Get(field); ok {
		return pyyaml.JSON(x), true
	}
	return "", false
}

// Master is the merged master configs.
type Master struct {
	Files   []string
	Keys    []string // in load order: first file's keys in file order, then the next file's
	Recipes map[string]*Recipe
}

// Sentinel errors of LoadMaster.
var (
	ErrMasterInvalid = errors.New("invalid master config")
)

// LoadMaster parses and merges master config files the way the incumbent's
// load_config_files does: each file must hold a mapping (PyYAML safe_load,
// duplicate keys inside one file merge, last wins), no key may contain '*',
// and no key may appear in two files. A nil Data means the file is missing.
func LoadMaster(files []File) (*Master, error) {
	m := &Master{Recipes: map[string]*Recipe{}}
	for _, f := range files {
		m.Files = append(m.Files, f.Path)
		if f.Data == nil {
			return nil, fmt.Errorf("%w: Input file '%s' does not exist.", ErrMasterInvalid, f.Path)
		}
		v, err := pyyaml.Load(f.Data, pyyaml.Options{})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrMasterInvalid, f.Path, err)
		}
		if v.Kind != pyyaml.Map {
			return nil, fmt.Errorf("%w: Config file '%s' must contain a dictionary", ErrMasterInvalid, f.Path)
		}
		var dups []string
		for _, p := range v.Pairs {
			if p.Key.Kind != pyyaml.Str {
				return nil, fmt.Errorf("%w: %s:%d: config key %s is not a string", ErrMasterInvalid, f.Path, p.Key.Line, p.Key.Repr())
			}
			if strings.Contains(p.Key.Str, "*") {
				return nil, fmt.Errorf("%w:  Wildcard '*' is not allowed in master config keys: '%s'", ErrMasterInvalid, p.Key.Str)
			}
			if _, ok := m.Recipes[p.Key.Str]; ok {
				dups = append(dups, p.Key.Str)
			}
		}
		if len(dups) > 0 {
			sort.Strings(dups)
			return nil, fmt.Errorf("%w: Duplicate configuration keys found in '%s': %s", ErrMasterInvalid, f.Path, strings.Join(dups, ", "))
		}
		for _, p := range v.Pairs {
			m.Keys = append(m.Keys, p.Key.Str)
			m.Recipes[p.Key.Str] = NewRecipe(p.Key.Str, f.Path, p.Key.Line, p.Value)
		}
	}
	return m, nil
}

// KeyError is a config-key that does not resolve.
type KeyError struct {
	Pattern string
	// Wildcard is true when Pattern holds '*' and matched nothing.
	Wildcard bool
	// Closest are the nearest existing keys, best first.
	Closest []string
}

func (e *KeyError) Error() string {
	if e.Wildcard {
		return fmt.Sprintf("No config keys matched the wildcard pattern '%s' in master configs.", e.Pattern)
	}
	return fmt.Sprintf("Config key '%s' not found in master configs.", e.Pattern)
}

// GlobRegexp compiles a config-key pattern the incumbent's way: '*' matches
// any run of characters (but not a newline), everything else is literal, and
// the whole key must match.
func GlobRegexp(pattern string) *regexp.Regexp {
	// the expression reads an invalid byte of a key as U+FFFD; one in the
	// pattern would not compile
	pattern = strings.ToValidUTF8(pattern, "\uFFFD")
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^(?:` + strings.Join(parts, `.*`) + `)$`)
}

// GlobMatch reports whether key matches pattern as GlobRegexp(pattern)
// does, without compiling an expression (a history matches each entry's
// patterns against many keys).
func GlobMatch(pattern, key string) bool {
	if strings.IndexByte(key, '\n') >= 0 { // '*' does not cross a newline
		return GlobRegexp(pattern).MatchString(key)
	}
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == key
	}
	if !strings.HasPrefix(key, parts[0]) {
		return false
	}
	rest := key[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] { // the leftmost place of each leaves the most room
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// Match resolves one config-key (plain or with '*') against the master
// keys, in load order.
func (m *Master) Match(pattern string) ([]string, *KeyError) {
	if !strings.Contains(pattern, "*") {
		if _, ok := m.Recipes[pattern]; ok {
			return []string{pattern}, nil
		}
		return nil, &KeyError{Pattern: pattern, Closest: Closest(pattern, m.Keys, 3)}
	}
	var out []string
	for _, k := range m.Keys {
		if GlobMatch(pattern, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, &KeyError{Pattern: pattern, Wildcard: true, Closest: Closest(strings.ReplaceAll(pattern, "*", ""), m.Keys, 3)}
	}
	return out, nil
}

// Resolve resolves a list of config-keys as process_changelog does: each
// pattern in order, duplicates removed keeping the first occurrence. It
// returns every unresolvable pattern, not just the first.
func (m *Master) Resolve(patterns []string) ([]string, []*KeyError) {
	seen := map[string]bool{}
	var out []string
	var errs []*KeyError
	for _, p := range patterns {
		keys, err := m.Match(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, errs
}

// Closest returns up to n candidates nearest to key by edit distance (ties
// by shared prefix, then name), skipping ones too far to be a typo.
func Closest(key string, candidates []string, n int) []string {
	type scored struct {
		k      string
		d, pre int
	}
	var s []scored
	limit := max(3, len(key)/3)
	for _, c := range candidates {
		d := levenshtein(key, c)
		if d <= limit {
			s = append(s, scored{c, d, commonPrefix(key, c)})
		}
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].d != s[j].d {
			return s[i].d < s[j].d
		}
		if s[i].pre != s[j].pre {
			return s[i].pre > s[j].pre
		}
		return s[i].k < s[j].k
	})
	var out []string
	for i := 0; i < len(s) && i < n; i++ {
		out = append(out, s[i].k)
	}
	return out
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Distance is the edit distance between two keys.
func Distance(a, b string) int { return levenshtein(a, b) }
