package changelog

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/perflog/perflog/internal/pyyaml"
)

// DraftEntry is a changelog entry drafted from a change (perflog
// changelog new). JSON field names are a public contract.
type DraftEntry struct {
	ConfigKeys []string `json:"config_keys"`
	// ScenarioType limits the entry's sweep to these scenarios (none: all
	// of them), written when the repository's recent entries write it.
	ScenarioType []string `json:"scenario_type,omitempty"`
	Description  []string `json:"description"`
	PRLink       string   `json:"pr_link"`
	AppendOnly   bool     `json:"append_only,omitempty"`
}

// EntryLink is the pr-link of a new entry of repo ("owner/name"): PR's
// link, or the XXX placeholder when the PR is not known (0).
func EntryLink(repo string, pr int) string {
	if pr <= 0 {
		return "https://github.com/" + repo + "/pull/XXX"
	}
	return fmt.Sprintf("https://github.com/%s/pull/%d", repo, pr)
}

// RenderEntry writes an entry the way InferenceX writes them: two-space
// indented lists, double-quoted bullets, no trailing blank line.
func RenderEntry(e DraftEntry) string {
	var b strings.Builder
	b.WriteString("- config-keys:\n")
	for _, k := range e.ConfigKeys {
		b.WriteString("    - " + yamlScalar(k) + "\n")
	}
	if len(e.ScenarioType) > 0 {
		b.WriteString("  scenario-type:\n")
		for _, s := range e.ScenarioType {
			b.WriteString("    - " + yamlScalar(s) + "\n")
		}
	}
	b.WriteString("  description:\n")
	for _, d := range e.Description {
		b.WriteString("    - " + yamlQuote(d) + "\n")
	}
	if e.AppendOnly {
		b.WriteString("  append-only: true\n")
	}
	b.WriteString("  pr-link: " + e.PRLink + "\n")
	return b.String()
}

// WritesScenarioType reports whether a changelog knows scenario-type:
// some entry writes it. InferenceX's entries have since June 2026, never
// all of them; an author who writes it is never wrong to, and a draft
// that says it tells a reader which scenario the change is about, so a
// draft then writes it too.
func WritesScenarioType(path string, raw []byte) bool {
	f, err := Parse(path, raw)
	if err != nil || f == nil {
		return false
	}
	for _, e := range f.Entries {
		if _, ok := e.value.Get(FieldScenarioType); ok {
			return true
		}
	}
	return false
}

// yamlScalar writes a config key plain when that reads back as the same
// string, quoted otherwise.
func yamlScalar(s string) string {
	if v, err := pyyaml.Load([]byte("k: "+s+"\n"), pyyaml.Options{}); err == nil {
		if x, ok := v.Get("k"); ok && x.Kind == pyyaml.Str && x.Str == s && !strings.ContainsAny(s, "#:") {
			return s
		}
	}
	return yamlQuote(s)
}

// yamlQuote writes a double-quoted YAML string.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			// (YAML's non-printable characters, a terminal's escapes among
			// them, and its line separators: escaped, so that the file loads
			// and shows them inert)
			switch {
			case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
				fmt.Fprintf(&b, `\x%02x`, r)
			case r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
