package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// SettingsFile is the name of perflog's settings file at the repository root.
const SettingsFile = ".perflog.yaml"

// Settings is perflog's settings file. Every field is optional; the zero
// value means InferenceX defaults.
//
//	# .perflog.yaml
//	changelog:
//	  file: perf-changelog.yaml
//	  master-configs: [configs/amd-master.yaml, configs/nvidia-master.yaml]
//	github:
//	  repository: SemiAnalysisAI/InferenceX
//	rules:
//	  append-only/not-at-end: warning   # error | warning | info | off
type Settings struct {
	Changelog ChangelogSettings `yaml:"changelog"`
	GitHub    GitHubSettings    `yaml:"github"`
	// Rules overrides rule severities: a rule id ("pr-link/mismatch") or a
	// family ("pr-link/*") mapped to error, warning, info or off.
	Rules map[string]string `yaml:"rules"`
	// IgnoreRevs lists commits (full or abbreviated ids) that history
	// attribution looks through, like .git-blame-ignore-revs.
	IgnoreRevs []string `yaml:"ignore-revs"`
	// Scripts configure key → script resolution (see ScriptSettings).
	Scripts ScriptSettings `yaml:"scripts"`
	// IgnoreRevsFile names a file in the repository (read at the revision
	// examined) listing more such commits, one per line, '#' comments
	// allowed: the format of .git-blame-ignore-revs.
	IgnoreRevsFile string `yaml:"ignore-revs-file"`
	// Launch configures the dry run of recipes (see LaunchSettings).
	Launch LaunchSettings `yaml:"launch"`
}

// LaunchSettings configure how a recipe point is dry-run and judged.
type LaunchSettings struct {
	// Env overrides the environment the workflow gives a point: NAME →
	// template, where ${tp}, ${ep}, ${dp-attn}, ${conc}, ${spec-decoding},
	// ${kv-offloading}, ${kv-offload-backend}, ${isl}, ${osl},
	// ${scenario}, ${runner} and ${key} are the point's and ${NAME} any
	// variable of the built-in environment; "" removes the variable.
	Env map[string]string `yaml:"env"`
	// Servers, Routers and Clients replace the command prefixes recorded
	// as launches (e.g. [python*, -m, sglang.launch_server]).
	Servers [][]string `yaml:"servers"`
	Routers [][]string `yaml:"routers"`
	Clients [][]string `yaml:"clients"`
	// Wiring replaces, per framework, the options and environment
	// variables that realise a point's setting (launch/not-wired):
	// framework → setting (dp-attn, ep, spec-decoding, kv-offloading, tp)
	// → option names ("--enable-dp-attention") or variables ("$NAME").
	Wiring map[string]map[string][]string `yaml:"wiring"`
}

// ChangelogSettings locates the changelog and the master configs.
type ChangelogSettings struct {
	// File is the changelog path (default perf-changelog.yaml).
	File string `yaml:"file"`
	// MasterConfigs are the master config paths in merge order (default
	// configs/{amd,nvidia}-master.yaml, falling back to .github/configs/).
	MasterConfigs []string `yaml:"master-configs"`
}

// GitHubSettings names the GitHub repository.
type GitHubSettings struct {
	// Repository is "owner/name"; canonical pr-links point into it
	// (default SemiAnalysisAI/InferenceX).
	Repository string `yaml:"repository"`
	// Aliases are former names of the repository: history links into
	// them name the same pull requests (default for InferenceX:
	// InferenceMAX/InferenceMAX, its name before the rebrand).
	Aliases []string `yaml:"aliases"`
	// FormerRepositories are former names too (the documented spelling;
	// aliases stays accepted).
	FormerRepositories []string `yaml:"former-repositories"`
}

// Defaults.
const (
	DefaultChangelog  = "perf-changelog.yaml"
	DefaultRepository = "SemiAnalysisAI/InferenceX"
)

// ErrSettings marks an invalid settings file.
var ErrSettings = errors.New("invalid settings")

var repoSlug = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// ParseSettings reads a settings file; unknown keys are errors so that a
// typo does not silently disable a rule override.
func ParseSettings(name string, data []byte) (*Settings, error) {
	s := &Settings{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.ReplaceAll(strings.TrimPrefix(msg, "unmarshal errors:\n"), "\n", ";")
		msg = unknownField.ReplaceAllStringFunc(msg, unknownSetting)
		return nil, fmt.Errorf("%w: %s: %s", ErrSettings, name, strings.Join(strings.Fields(msg), " "))
	}
	for _, r := range append(append([]string{s.GitHub.Repository}, s.GitHub.Aliases...), s.GitHub.FormerRepositories...) {
		if r != "" && !repoSlug.MatchString(r) {
			return nil, fmt.Errorf("%w: %s: github repositories must be owner/name, got %q", ErrSettings, name, r)
		}
	}
	if err := s.checkPaths(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSettings, name, err)
	}
	for id, sev := range s.Rules {
		switch sev {
		case "error", "warning", "info", "off":
		default:
			return nil, fmt.Errorf("%w: %s: rules.%s: severity must be error, warning, info or off, got %q", ErrSettings, name, id, sev)
		}
	}
	return s, nil
}

// checkPaths confines the paths the settings name to the repository:
// relative, slash-separated, clean and not leaving the root. (A symbolic
// link inside the work tree is resolved where a file is opened.)
func (s *Settings) checkPaths() error {
	named := []struct{ key, p string }{
		{"changelog.file", s.Changelog.File},
		{"scripts.runners", s.Scripts.Runners},
		{"ignore-revs-file", s.IgnoreRevsFile},
	}
	for _, m := range s.Changelog.MasterConfigs {
		named = append(named, struct{ key, p string }{"changelog.master-configs", m})
	}
	for _, n := range named {
		if n.p == "" {
			continue
		}
		if err := CheckRepoPath(n.p); err != nil {
			return fmt.Errorf("%s: %w", n.key, err)
		}
	}
	return nil
}

// CheckRepoPath says whether p names a file inside a repository: a
// relative, clean, slash-separated path that does not leave the root.
func CheckRepoPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("%q: use a slash-separated path inside the repository", p)
	case path.IsAbs(p) || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return fmt.Errorf("%q is absolute; use a path relative to the repository root", p)
	case !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p:
		return fmt.Errorf("%q leaves the repository or is not clean (want e.g. %q)", p, cleanHint(p))
	}
	return nil
}

func cleanHint(p string) string {
	c := path.Clean(p)
	for strings.HasPrefix(c, "../") {
		c = strings.TrimPrefix(c, "../")
	}
	return strings.TrimPrefix(c, "/")
}

// unknownField is yaml.v3's message for a key no field takes.
var unknownField = regexp.MustCompile(`field (\S+) not found in type config\.(\w+)`)

// settingSections names where each settings type sits in the file.
var settingSections = map[string]reflect.Type{
	"":                   reflect.TypeFor[Settings](),
	"changelog":          reflect.TypeFor[ChangelogSettings](),
	"github":             reflect.TypeFor[GitHubSettings](),
	"scripts":            reflect.TypeFor[ScriptSettings](),
	"scripts.families.*": reflect.TypeFor[FamilyScript](),
}

// unknownSetting rewrites yaml.v3's message for an unknown key (which
// names a Go type) in the file's terms: the key, its section and the keys
// the section takes.
func unknownSetting(m string) string {
	sub := unknownField.FindStringSubmatch(m)
	for section, t := range settingSections {
		if t.Name() != sub[2] {
			continue
		}
		var known []string
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
				known = append(known, k)
			}
		}
		where := ""
		if section != "" {
			where = " under " + section
		}
		return fmt.Sprintf("unknown setting %q%s (known: %s)", sub[1], where, strings.Join(known, ", "))
	}
	return m
}

// ChangelogPath returns the configured changelog path.
func (s *Settings) ChangelogPath() string {
	if s != nil && s.Changelog.File != "" {
		return s.Changelog.File
	}
	return DefaultChangelog
}

// Repository returns the configured owner/name.
func (s *Settings) Repository() string {
	if s != nil && s.GitHub.Repository != "" {
		return s.GitHub.Repository
	}
	return DefaultRepository
}

// RepositoryNames returns the repository and its former names.
func (s *Settings) RepositoryNames() []string {
	out := []string{s.Repository()}
	if s != nil && len(s.GitHub.Aliases)+len(s.GitHub.FormerRepositories) > 0 {
		return append(append(out, s.GitHub.FormerRepositories...), s.GitHub.Aliases...)
	}
	if s.Repository() == DefaultRepository {
		out = append(out, "InferenceMAX/InferenceMAX")
	}
	return out
}

// RunnersCandidates returns the runner-label files to try, in order.
func (s *Settings) RunnersCandidates() []string {
	if s != nil && s.Scripts.Runners != "" {
		return []string{s.Scripts.Runners}
	}
	return []string{"configs/runners.yaml", ".github/configs/runners.yaml"}
}

// MasterCandidates returns the master config layouts to try, in order.
func (s *Settings) MasterCandidates() [][]string {
	if s != nil && len(s.Changelog.MasterConfigs) > 0 {
		return [][]string{s.Changelog.MasterConfigs}
	}
	return [][]string{DefaultMasterFiles, LegacyMasterFiles}
}

// SeverityOf returns the severity of a finding of rule id whose own
// severity is def, once overridden; on is false when the rule is off.
func (s *Settings) SeverityOf(id, def string) (sev string, on bool) {
	switch o := s.Severity(id); o {
	case "off":
		return "", false
	case "":
		return def, true
	default:
		return o, true
	}
}

// Severity returns the override for rule id ("" when none): an exact id
// wins over its family ("family/*").
func (s *Settings) Severity(id string) string {
	if s == nil {
		return ""
	}
	if v, ok := s.Rules[id]; ok {
		return v
	}
	if fam, _, ok := strings.Cut(id, "/"); ok {
		return s.Rules[fam+"/*"]
	}
	return ""
}

// MaxSettingsSize bounds a settings file: it is a few lines of YAML.
const MaxSettingsSize = 1 << 20

// ReadSettings reads and parses the settings file name. Only a regular
// file of at most MaxSettingsSize bytes is read (not a FIFO, a device or
// a directory, which could block or never end).
func ReadSettings(name string) (*Settings, error) {
	data, err := ReadRegular(name, MaxSettingsSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	return ParseSettings(name, data)
}

// ReadRegular reads a regular file of at most max bytes; anything else
// (a FIFO, a device, a directory, a larger file) is an error that says so.
func ReadRegular(name string, max int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes; at most %d are read", name, fi.Size(), max)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over %d bytes; at most %d are read", name, max, max)
	}
	return data, nil
}
