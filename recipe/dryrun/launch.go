package dryrun

import (
	"sort"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// Command is one recorded launch.
type Command struct {
	// Argv is the command as run, wrapper (mpirun, srun, ...) removed.
	Argv []string `json:"argv"`
	// Wrapper is what ran it (e.g. "mpirun -n 1 --oversubscribe").
	Wrapper []string `json:"wrapper,omitempty"`
	// At is the file:line of the command.
	At string `json:"at"`
	// Role is the worker a described multi-node command is ("prefill",
	// "decode", "frontend"); "" for a dry-run command.
	Role string `json:"role,omitempty"`
	// Flags are Argv's options parsed: name → values, in order; Stray
	// lists the elements that are neither (an empty or whitespace-only
	// element is always stray).
	Flags []ArgFlag `json:"flags"`
	Stray []Stray   `json:"stray,omitempty"`
	// Env is the exported environment the command started with.
	Env map[string]string `json:"env"`
	// EnvAt is, by variable, the file:line that exported the value the
	// command started with (an export, declare -x, or the wrapper's
	// -e/--env); a variable left out was set where the dry run cannot
	// name (the workflow, an assignment to a variable exported before).
	EnvAt map[string]string `json:"env_at,omitempty"`
	// HiddenEnv lists unknown words the run exported where names stand
	// before this command started (export "$pair" of what a program the
	// sandbox does not run printed): the command may start with
	// variables Env does not name.
	HiddenEnv []string `json:"hidden_env,omitempty"`
	// Files are files the run wrote that Argv names (e.g. an
	// --extra_llm_api_options YAML), with their content.
	Files map[string]string `json:"files,omitempty"`
}

// ArgFlag is one option of a command line with its values ("--tp 8",
// "--tp=8", "--enable-dp-attention" with none).
type ArgFlag struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Stray is an argv element that is not part of an option.
type Stray struct {
	Index int    `json:"index"`
	Value string `json:"value"`
}

// Unknown is what a dry run could not evaluate.
type Unknown struct {
	At   string `json:"at,omitempty"`
	What string `json:"what"`
}

// Run statuses.
const (
	StatusLaunched = "launched" // a server was started
	StatusFailed   = "failed"   // the run exited non-zero before a server started
	StatusNoServer = "no-server"
	StatusUnknown  = "unknown" // the run could not be evaluated to the end
)

// Launch is what one dry run launched.
type Launch struct {
	Status string `json:"status"`
	Exit   int    `json:"exit"`
	// EndedAt is the file:line of the command that ended the run with a
	// non-zero status, Reason what it said last (stderr) or why the run
	// stopped.
	EndedAt string    `json:"ended_at,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Servers []Command `json:"servers"`
	Routers []Command `json:"routers,omitempty"`
	Clients []Command `json:"clients,omitempty"`
	// Unknowns list what could not be evaluated; Stubbed the commands
	// that were not run (sorted, each once).
	Unknowns []Unknown `json:"unknowns,omitempty"`
	Stubbed  []string  `json:"stubbed,omitempty"`

	read *runReads // how the run read its files, for Memo
}

// runReads is how a run read its shell files: the files it read only as
// code (ran or sourced, never read as data), and every name it called
// or passed to a command (a function asked for by name is in use).
type runReads struct {
	code   map[string]bool
	ran    map[string]bool // every file it ran or sourced (read as data too or not)
	called map[string]bool
	// shapes of the files it ran (a memo signs them)
	shapes map[string]*codeShape
}

// Started reports whether the launch has servers to compare: launched
// by a dry run, or described by a recipe file.
func (l *Launch) Started() bool { return l.Status == StatusLaunched || l.Status == StatusDescribed }

// Server is the first server launched (nil when none).
func (l *Launch) Server() *Command {
	if len(l.Servers) == 0 {
		return nil
	}
	return &l.Servers[0]
}

// FlagString parses the options of a command-line fragment written as
// one string ("--tp 8 --compilation-config '{...}'"), split as the shell
// splits words; ok is false when it does not split (unbalanced quotes).
func FlagString(s string) (flags []ArgFlag, ok bool) {
	words, err := shell.Fields(s, func(string) string { return "" })
	if err != nil {
		return nil, false
	}
	flags, _ = ParseArgv(words, 0)
	return flags, true
}

// ParseArgv splits a command line after its first program words (e.g.
// 3 for python3 -m sglang.launch_server) into options with their values
// and stray elements: an element that starts with "-" opens an option
// ("--x=v" carries its value), the elements after it up to the next
// option are its values; an empty or whitespace-only element is stray
// wherever it is (after the program words).
func ParseArgv(argv []string, program int) ([]ArgFlag, []Stray) {
	flags := []ArgFlag{}
	var stray []Stray
	cur := -1
	for i, a := range argv {
		if i < program {
			continue
		}
		switch {
		case strings.TrimSpace(a) == "":
			stray = append(stray, Stray{Index: i, Value: a})
		case strings.HasPrefix(a, "-") && len(a) > 1 && !isNumber(a):
			name, val, hasVal := strings.Cut(a, "=")
			flags = append(flags, ArgFlag{Name: name, Values: []string{}})
			cur = len(flags) - 1
			if hasVal {
				flags[cur].Values = append(flags[cur].Values, val)
			}
		case cur >= 0:
			flags[cur].Values = append(flags[cur].Values, a)
		}
	}
	return flags, stray
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// Flag returns the values of an option ("--tp"), and whether it is set.
// A name with underscores matches one with dashes (trtllm-serve's
// --tp_size and --tp-size are one option).
func (c *Command) Flag(name string) ([]string, bool) {
	norm := func(s string) string { return strings.ReplaceAll(s, "_", "-") }
	var vals []string
	found := false
	for _, f := range c.Flags {
		if norm(f.Name) == norm(name) {
			found = true
			vals = append(vals, f.Values...)
		}
	}
	return vals, found
}

// HiddenOptions returns the elements of the command line that are
// unknown values where options may stand: an unknown word that is not
// the one value right after an option (`--tp 8 <unknown:python3>`, as a
// variable of flags printed by a program the sandbox does not run
// expands). Such a command may pass options the dry run cannot name, so
// an option's absence from it is not known.
func (c *Command) HiddenOptions() []string {
	var out []string
	for i, a := range c.Argv {
		if i == 0 || !strings.HasPrefix(a, UnknownMarker) || !strings.HasSuffix(a, ">") || strings.Count(a, UnknownMarker) != 1 {
			continue
		}
		if prev := c.Argv[i-1]; strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && !isNumber(prev) {
			continue // an option's value
		}
		out = append(out, a)
	}
	return out
}

// EnvChanges lists the variables of the command's environment that the
// launch path set or changed from the workflow's (base), sorted: what
// the recipe's files chose, not what every point is given.
func (c *Command) EnvChanges(base map[string]string) []string {
	var out []string
	for k, v := range c.Env {
		if b, ok := base[k]; !ok || b != v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Program names a launch by its program words ("python3 -m
// sglang.launch_server", "vllm serve MODEL", "trtllm-serve MODEL"): the
// words before its first option, at most three.
func (c *Command) Program() string {
	var w []string
	for _, a := range c.Argv {
		if strings.HasPrefix(a, "-") && a != "-m" {
			break
		}
		w = append(w, a)
		if len(w) == 3 {
			break
		}
	}
	return strings.Join(w, " ")
}
