package changelog

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
)

// gateAdditions is the outcome of the incumbent's get_added_lines.
type gateAdditions struct {
	// text is the added lines joined with "\n".
	text string
	// lines maps a 1-based line of text to its head line.
	lines []int
	// deleted is the first deleted non-blank line, if any.
	deleted     *diffLine
	deletedText string
	binary      bool
	undecodable bool
}

func gateDiff(in *Input) gateAdditions {
	out, binary, ok := gitDiffOutput(in.Base, in.Head, in.Base != nil, in.Head != nil)
	g := gateAdditions{binary: binary, undecodable: !ok}
	var added []string
	for i := range out {
		l := out[i]
		switch {
		case strings.HasPrefix(l.text, "-") && !strings.HasPrefix(l.text, "---"):
			if pyStrip(l.text[1:]) != "" && g.deleted == nil {
				g.deleted = &out[i]
				g.deletedText = l.text[1:]
			}
		case strings.HasPrefix(l.text, "+") && !strings.HasPrefix(l.text, "+++"):
			added = append(added, l.text[1:])
			g.lines = append(g.lines, l.newLine)
		}
	}
	g.text = strings.Join(added, "\n")
	return g
}

// verifyGate reproduces validate_perf_changelog.py main(): the final
// newline check, then process_changelog.py's diff, parse, mode and key
// checks. Where the incumbent stops at its first error this reports every
// independent one, but reports an error exactly when the incumbent fails.
func verifyGate(in *Input) *Report {
	rep := &Report{}
	add := func(f Finding) {
		f.File = in.Path
		rep.Findings = append(rep.Findings, f)
	}
	if in.Head == nil {
		add(Finding{Rule: RuleMissingFile, Severity: Error, Message: fmt.Sprintf("could not read %s at %s", in.Path, in.HeadRev)})
		return rep
	}
	if !bytes.HasSuffix(in.Head, []byte("\n")) {
		add(Finding{Rule: RuleFinalNewline, Severity: Error, Line: countLines(in.Head),
			Message: fmt.Sprintf("%s at %s does not end with a newline", in.Path, in.HeadRev)})
	}
	g := gateDiff(in)
	if g.undecodable {
		add(Finding{Rule: RuleNotUTF8, Severity: Error, Message: "the diff of " + in.Path + " is not valid UTF-8 (the gate cannot decode it)"})
		return rep
	}
	if g.deleted != nil {
		add(Finding{Rule: RuleDeletedLine, Severity: Error, Line: g.deleted.oldLine,
			Message: fmt.Sprintf("Deletions are not allowed in %s. Only additions to the changelog are permitted. Found deleted line: %s (line %d at %s)",
				in.Path, g.deletedText, g.deleted.oldLine, in.BaseRev),
			Source: g.deletedText})
		return rep
	}
	if pyStrip(g.text) == "" {
		msg := "No additions found in the changelog file."
		if g.binary {
			msg += " (git treats the file as binary: it has a NUL byte in its first 8000 bytes)"
		}
		add(Finding{Rule: RuleNoAdditions, Severity: Error, Message: msg})
		return rep
	}
	lineMap := func(l int) int {
		if l >= 1 && l <= len(g.lines) {
			return g.lines[l-1]
		}
		if len(g.lines) > 0 {
			return g.lines[len(g.lines)-1]
		}
		return 0
	}
	data, err := pyyaml.Load([]byte(g.text), pyyaml.Options{})
	if err != nil {
		f := loadFailure(in.Path, err, "the added lines of "+in.Path, lineMap)
		f.Rule = RuleYAML // SafeLoader: duplicate keys are not an error here
		add(f)
		return rep
	}
	if !data.Truthy() {
		add(Finding{Rule: RuleNoAdditions, Severity: Error, Line: lineMap(1), Message: "No valid YAML entries found in the changelog additions."})
		return rep
	}
	if data.Kind != pyyaml.Seq {
		add(Finding{Rule: RuleRootNotList, Severity: Error, Line: lineMap(data.Line),
			Message: fmt.Sprintf("the added lines must form a YAML list of complete entries, got a %s", data.Kind)})
		return rep
	}
	var entries []*Fields
	for i, it := range data.Items {
		fields, errs := validate(it)
		for _, e := range errs {
			add(Finding{Rule: e.Rule, Severity: Error, Line: lineMap(e.Line),
				Message: fmt.Sprintf("added entry %d fails ChangelogEntry validation: %s", i+1, e.Msg)})
		}
		entries = append(entries, fields)
	}
	for _, f := range entries {
		if f == nil {
			return rep // pydantic raised: the rest never runs
		}
	}
	var itemLines []int
	for _, it := range data.Items {
		itemLines = append(itemLines, lineMap(it.Line))
	}
	gateModeAndKeys(in, entries, itemLines, data.Items, nil, lineMap, add, false)
	return rep
}

// gateModeAndKeys runs process_changelog's checks after validation: the
// append-only mode mix, key resolution against the head master configs,
// and the append-only scope checks against the base.
// index, when set, gives each entry's 1-based position in the head file.
func gateModeAndKeys(in *Input, entries []*Fields, lines []int, values []*pyyaml.Value, index []int, lineMap func(int) int, add func(Finding), suggest bool) {
	entryOf := func(i int) int {
		if index != nil {
			return index[i]
		}
		return 0
	}
	hasAO, allAO := false, true
	for _, e := range entries {
		if e.AppendOnly {
			hasAO = true
		} else {
			allAO = false
		}
	}
	if hasAO && !allAO {
		for i, e := range entries {
			if e.AppendOnly {
				add(Finding{Rule: RuleModeMix, Severity: Error, Line: lines[i], Entry: entryOf(i),
					Message: "append-only entries cannot share a sweep with regular changelog entries"})
				break
			}
		}
		return
	}
	master, masterErr := in.master()
	if master == nil {
		msg := "master configs could not be loaded"
		if masterErr != nil {
			msg = masterErr.Error()
		}
		add(Finding{Rule: RuleMasterInvalid, Severity: Error, Message: msg})
		return
	}
	selected := map[string]map[string]bool{}
	var order []string
	failed := false
	for i, e := range entries {
		keys, errs := master.Resolve(e.ConfigKeys)
		for _, ke := range errs {
			msg := ke.Error()
			if suggest && len(ke.Closest) > 0 {
				msg += " Did you mean " + quoteJoin(ke.Closest) + "?"
			}
			line := lines[i]
			if values != nil {
				line = keyLine(values[i], ke.Pattern, lineMap, line)
			}
			add(Finding{Rule: RuleUnknownKey, Severity: Error, Line: line, Entry: entryOf(i), ConfigKey: ke.Pattern, Message: msg})
			failed = true
		}
		scen := e.ScenarioType
		if len(scen) == 0 {
			scen = config.ScenarioTypes
		}
		for _, k := range keys {
			if selected[k] == nil {
				selected[k] = map[string]bool{}
				order = append(order, k)
			}
			for _, s := range scen {
				selected[k][s] = true
			}
		}
	}
	if failed || !hasAO {
		return
	}
	var bm *config.Master
	var bmErr error
	if in.BaseMaster != nil {
		bm, bmErr = in.BaseMaster()
	}
	if err := config.AppendOnlyCheck(bm, bmErr, master, order, selected); err != nil {
		add(Finding{Rule: RuleAppendOnlyDelta, Severity: Error, Line: lines[0], Entry: entryOf(0), Message: err.Error()})
	}
}

func keyLine(entry *pyyaml.Value, pattern string, lineMap func(int) int, fallback int) int {
	v, ok := entry.Get(FieldConfigKeys)
	if !ok {
		return fallback
	}
	for _, it := range v.Items {
		if it.Kind == pyyaml.Str && it.Str == pattern {
			if lineMap != nil {
				return lineMap(it.Line)
			}
			return it.Line
		}
	}
	return fallback
}

func quoteJoin(ks []string) string {
	q := make([]string, len(ks))
	for i, k := range ks {
		q[i] = "'" + k + "'"
	}
	return strings.Join(q, " or ")
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
