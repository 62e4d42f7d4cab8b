package changelog

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
)

// Fields of a changelog entry (the YAML keys of the incumbent's
// ChangelogEntry pydantic model, which accepts only these aliases).
const (
	FieldConfigKeys       = "config-keys"
	FieldDescription      = "description"
	FieldPRLink           = "pr-link"
	FieldEvalsOnly        = "evals-only"
	FieldAllEvals         = "all-evals"
	FieldAppendOnly       = "append-only"
	FieldEvalMinPrefillEP = "eval-min-prefill-ep"
	FieldScenarioType     = "scenario-type"
)

// SchemaError is one validation error of an entry.
type SchemaError struct {
	Rule  string
	Field string
	Line  int
	Msg   string
}

// Fields is the typed content of a valid entry.
type Fields struct {
	ConfigKeys       []string
	Description      []string
	PRLink           string
	EvalsOnly        bool
	AllEvals         bool
	AppendOnly       bool
	EvalMinPrefillEP *int64
	ScenarioType     []string
}

// byAlias returns the entry with each field given by its Python name
// alone renamed to its alias (the original value is kept: lines and
// errors point where the entry is written).
func byAlias(v *pyyaml.Value, known map[string]bool) *pyyaml.Value {
	var renamed []int
	for i, p := range v.Pairs {
		if p.Key.Kind != pyyaml.Str || !strings.Contains(p.Key.Str, "_") {
			continue
		}
		alias := strings.ReplaceAll(p.Key.Str, "_", "-")
		if _, dup := v.Get(alias); known[alias] && !dup {
			renamed = append(renamed, i)
		}
	}
	if len(renamed) == 0 {
		return v
	}
	c := *v
	c.Pairs = append([]pyyaml.Pair(nil), v.Pairs...)
	for _, i := range renamed {
		k := *c.Pairs[i].Key
		k.Str = strings.ReplaceAll(k.Str, "_", "-")
		c.Pairs[i].Key = &k
	}
	return &c
}

// validate checks an entry value against the ChangelogEntry model with
// pydantic v2's lax coercions (bool accepts 0/1, "yes"/"off"/…; str accepts
// bytes; int accepts "2", 2.0, true; lists accept sets) and returns the typed
// fields, or every error found.
func validate(v *pyyaml.Value) (*Fields, []SchemaError) {
	if v == nil || v.Kind != pyyaml.Map {
		line := 0
		kind := "None"
		if v != nil {
			line, kind = v.Line, v.Kind.String()
		}
		return nil, []SchemaError{{Rule: RuleNotMapping, Line: line, Msg: fmt.Sprintf("entry must be a mapping, got %s", kind)}}
	}
	f := &Fields{}
	var errs []SchemaError
	add := func(rule, field string, line int, format string, a ...any) {
		errs = append(errs, SchemaError{Rule: rule, Field: field, Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	known := map[string]bool{}
	for _, k := range []string{FieldConfigKeys, FieldDescription, FieldPRLink, FieldEvalsOnly, FieldAllEvals, FieldAppendOnly, FieldEvalMinPrefillEP, FieldScenarioType} {
		known[k] = true
	}
	// pydantic's populate_by_name: a field is also accepted by its
	// Python name (evals_only for evals-only); given both ways, the alias
	// is used and the Python name is an extra input
	v = byAlias(v, known)
	for _, p := range v.Pairs {
		if p.Key.Kind != pyyaml.Str || !known[p.Key.Str] {
			name := p.Key.Repr()
			if p.Key.Kind == pyyaml.Str {
				name = p.Key.Str
			}
			hint := ""
			if p.Key.Kind == pyyaml.Str {
				if alias := strings.ReplaceAll(p.Key.Str, "_", "-"); known[alias] {
					hint = fmt.Sprintf(" (did you mean %q?)", alias)
				}
			}
			add(RuleExtraField, name, p.Key.Line, "unknown field %q: extra inputs are not permitted%s", name, hint)
		}
	}
	strList := func(field string, required bool, into *[]string) bool {
		x, ok := v.Get(field)
		if !ok {
			if required {
				add(RuleRequired, field, v.Line, "field %q is required", field)
			}
			return false
		}
		if !required && x.Kind == pyyaml.Null {
			return false
		}
		if x.Kind != pyyaml.Seq && x.Kind != pyyaml.Set {
			add(RuleType, field, x.Line, "%q must be a list of strings, got %s %s", field, x.Kind, short(x))
			return false
		}
		good := true
		for i, it := range x.Items {
			s, ok := laxStr(it)
			if !ok {
				add(RuleType, field, it.Line, "%q item %d must be a string, got %s %s", field, i+1, it.Kind, short(it))
				good = false
				continue
			}
			*into = append(*into, s)
		}
		if len(x.Items) == 0 {
			add(RuleTooShort, field, x.Line, "%q must list at least one item", field)
			return false
		}
		return good
	}
	strList(FieldConfigKeys, true, &f.ConfigKeys)
	strList(FieldDescription, true, &f.Description)

	if x, ok := v.Get(FieldPRLink); !ok {
		add(RuleRequired, FieldPRLink, v.Line, "field %q is required", FieldPRLink)
	} else if s, ok := laxStr(x); !ok {
		add(RuleType, FieldPRLink, x.Line, "%q must be a string, got %s %s", FieldPRLink, x.Kind, short(x))
	} else {
		f.PRLink = s
	}
	for _, b := range []struct {
		field string
		into  *bool
	}{{FieldEvalsOnly, &f.EvalsOnly}, {FieldAllEvals, &f.AllEvals}, {FieldAppendOnly, &f.AppendOnly}} {
		x, ok := v.Get(b.field)
		if !ok {
			continue
		}
		val, ok := laxBool(x)
		if !ok {
			add(RuleType, b.field, x.Line, "%q must be a boolean, got %s %s", b.field, x.Kind, short(x))
			continue
		}
		*b.into = val
	}
	if x, ok := v.Get(FieldEvalMinPrefillEP); ok && x.Kind != pyyaml.Null {
		if n, ok := laxInt(x); !ok {
			add(RuleType, FieldEvalMinPrefillEP, x.Line, "%q must be an integer, got %s %s", FieldEvalMinPrefillEP, x.Kind, short(x))
		} else if n < 1 {
			add(RuleValue, FieldEvalMinPrefillEP, x.Line, "%q must be greater than or equal to 1, got %d", FieldEvalMinPrefillEP, n)
		} else {
			f.EvalMinPrefillEP = &n
		}
	}
	if x, ok := v.Get(FieldScenarioType); ok && x.Kind != pyyaml.Null {
		if x.Kind != pyyaml.Seq && x.Kind != pyyaml.Set {
			add(RuleType, FieldScenarioType, x.Line, "%q must be a list, got %s %s", FieldScenarioType, x.Kind, short(x))
		} else if len(x.Items) == 0 {
			add(RuleTooShort, FieldScenarioType, x.Line, "%q must list at least one item", FieldScenarioType)
		} else {
			for _, it := range x.Items {
				if it.Kind != pyyaml.Str || (it.Str != config.ScenarioTypes[0] && it.Str != config.ScenarioTypes[1]) {
					add(RuleValue, FieldScenarioType, it.Line, "%q items must be 'fixed-seq-len' or 'agentic-coding', got %s", FieldScenarioType, short(it))
					continue
				}
				f.ScenarioType = append(f.ScenarioType, it.Str)
			}
		}
	}
	if len(errs) == 0 && f.AppendOnly && (f.EvalsOnly || f.AllEvals || f.EvalMinPrefillEP != nil) {
		line := v.Line
		if x, ok := v.Get(FieldAppendOnly); ok {
			line = x.Line
		}
		add(RuleFlagCombo, FieldAppendOnly, line, "append-only cannot be combined with eval selection fields (evals-only, all-evals, eval-min-prefill-ep)")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return f, nil
}

// short is v's repr for a message, cut to 60 characters (whole ones).
func short(v *pyyaml.Value) string {
	s := v.Repr()
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:57]) + "..."
	}
	return s
}

func laxStr(v *pyyaml.Value) (string, bool) {
	switch v.Kind {
	case pyyaml.Str:
		return v.Str, true
	case pyyaml.Bytes:
		return v.Str, utf8.ValidString(v.Str)
	}
	return "", false
}

func laxBool(v *pyyaml.Value) (bool, bool) {
	switch v.Kind {
	case pyyaml.Bool:
		return v.Bool, true
	case pyyaml.Int:
		if v.Int.IsInt64() && (v.Int.Int64() == 0 || v.Int.Int64() == 1) {
			return v.Int.Int64() == 1, true
		}
	case pyyaml.Float:
		if v.Float == 0 || v.Float == 1 {
			return v.Float == 1, true
		}
	case pyyaml.Str, pyyaml.Bytes:
		switch strings.ToLower(v.Str) {
		case "0", "off", "f", "false", "n", "no":
			return false, true
		case "1", "on", "t", "true", "y", "yes":
			return true, true
		}
	}
	return false, false
}

var intText = regexp.MustCompile(`^[+-]?[0-9](?:_?[0-9])*(?:\.0*)?$`)

func laxInt(v *pyyaml.Value) (int64, bool) {
	switch v.Kind {
	case pyyaml.Bool:
		if v.Bool {
			return 1, true
		}
		return 0, true
	case pyyaml.Int:
		if v.Int.IsInt64() {
			return v.Int.Int64(), true
		}
	case pyyaml.Float:
		if v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<62 {
			return int64(v.Float), true
		}
	case pyyaml.Str:
		s := strings.TrimSpace(v.Str)
		if intText.MatchString(s) {
			s = strings.ReplaceAll(s, "_", "")
			if i := strings.IndexByte(s, '.'); i >= 0 {
				s = s[:i]
			}
			var n int64
			if _, err := fmt.Sscan(s, &n); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}
