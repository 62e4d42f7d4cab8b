package main

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
)

type verifyHeader struct {
	base, head         plumbing.Hash
	baseName, headName string
	pr                 int
	prSource           string
}

const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

// writeText prints findings grouped by entry, each group headed by the
// entry and showing the offending YAML line, then a summary line.
func writeText(w io.Writer, rep *changelog.Report, in *changelog.Input, h verifyHeader, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	lineText := func(n int) string {
		if rep.Head == nil || n <= 0 {
			return ""
		}
		return rep.Head.LineText(n)
	}
	group := -1
	for _, f := range standing(rep.Findings) {
		if f.Entry != group || f.Entry == 0 {
			if group != -1 {
				fmt.Fprintln(w)
			}
			group = f.Entry
			switch {
			case f.Entry > 0 && rep.Head != nil && f.Entry <= len(rep.Head.Entries):
				e := rep.Head.Entries[f.Entry-1]
				fmt.Fprintf(w, "%s\n", paint(ansiBold, fmt.Sprintf("%s:%d: entry %d (lines %d-%d)", printable(f.File), e.Line, e.Index, e.Line, e.EndLine)))
			case f.Line > 0:
				fmt.Fprintf(w, "%s\n", paint(ansiBold, fmt.Sprintf("%s:%d:", printable(f.File), f.Line)))
			default:
				fmt.Fprintf(w, "%s\n", paint(ansiBold, printable(f.File)+":"))
			}
		}
		src := f.Source
		switch {
		case src != "":
		case f.File == "" || in == nil || f.File == in.Path:
			src = lineText(f.Line)
		default: // a line of another file: its evidence says what is there
			for _, e := range f.Evidence {
				if e.File == f.File && e.Line == f.Line {
					src = e.Text
					break
				}
			}
		}
		if f.Line > 0 && src != "" {
			fmt.Fprintf(w, "  %5d | %s\n", f.Line, printable(src))
		}
		sev := string(f.Severity)
		switch f.Severity {
		case changelog.Error:
			sev = paint(ansiRed, sev)
		case changelog.Warning:
			sev = paint(ansiYellow, sev)
		default:
			sev = paint(ansiCyan, sev)
		}
		fmt.Fprintf(w, "  %s %s: %s\n", sev, f.Rule, printable(f.Message))
		for _, e := range f.Evidence {
			if e.File == f.File && e.Line == f.Line {
				continue
			}
			fmt.Fprintf(w, "        %s %s:%d %s\n", paint(ansiCyan, e.Rev), printable(e.File), e.Line, printable(e.Text))
		}
		for _, d := range f.Details {
			fmt.Fprintf(w, "        %s %s\n", paint(ansiCyan, "also"), printable(d))
		}
	}
	if len(rep.Findings) > 0 {
		fmt.Fprintln(w)
	}
	s := countFindings(rep.Findings)
	verdict := "ok"
	if s.Errors > 0 {
		verdict = "FAIL"
	}
	pr := "non-PR run"
	if h.pr != 0 {
		pr = fmt.Sprintf("PR #%d from %s", h.pr, h.prSource)
	}
	suppressed := ""
	if s.Suppressed > 0 {
		suppressed = fmt.Sprintf(", %d suppressed", s.Suppressed)
	}
	fmt.Fprintf(w, "%s: %d error%s, %d warning%s, %d info%s (profile %s; base %s %s, head %s %s; %s)\n",
		verdict, s.Errors, plural(s.Errors), s.Warnings, plural(s.Warnings), s.Infos, suppressed,
		rep.Profile, h.baseName, shortHash(h.base), h.headName, shortHash(h.head), pr)
	if n := len(rep.Suggested); n > 0 {
		var keys []string
		for _, e := range rep.Suggested {
			keys = append(keys, e.ConfigKeys...)
		}
		fmt.Fprintf(w, "hint: `perflog changelog new` would append %d drafted entr%s for %s\n", n, map[bool]string{true: "y", false: "ies"}[n == 1], printable(strings.Join(keys, ", ")))
	}
	switch n, rules := fixable(rep.Findings, h.pr); {
	case n == 0 || rep.FixNothing: // (what it would repair is a correction it keeps)
	case rep.FixRefused == "":
		fmt.Fprintf(w, "hint: `perflog changelog fix%s` repairs %s (%s) in the work tree\n", prArg(h.pr), findingsText(n), strings.Join(rules, ", "))
	default:
		fmt.Fprintf(w, "hint: `perflog changelog fix` cannot repair this file: %s\n", printable(rep.FixRefused))
	}
}

// findingsText says how many of the findings above: "the finding", "2 of
// the findings".
func findingsText(n int) string {
	if n == 1 {
		return "1 of the findings above"
	}
	return fmt.Sprintf("%d of the findings above", n)
}

// prArg is the --pr argument a suggested command needs ("" without one).
func prArg(pr int) string {
	if pr <= 0 {
		return ""
	}
	return fmt.Sprintf(" --pr %d", pr)
}

// fixable counts the findings `perflog changelog fix` repairs, with their
// rules: a placeholder link only when the PR is known.
func fixable(fs []changelog.Finding, pr int) (n int, rules []string) {
	for _, f := range fs {
		if changelog.Fixable[f.Rule] && f.Suppressed == "" && (f.Rule != changelog.RulePRPlaceholder || pr > 0) {
			n++
			if !slices.Contains(rules, f.Rule) {
				rules = append(rules, f.Rule)
			}
		}
	}
	return n, rules
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// withDetails is a finding's message with the items it leaves out, one a
// line, for the formats that carry only a message (annotations, SARIF).
func withDetails(f changelog.Finding) string {
	if len(f.Details) == 0 {
		return f.Message
	}
	return f.Message + "\n- " + strings.Join(f.Details, "\n- ")
}

// writeGitHub prints GitHub Actions workflow commands, one per finding.
func writeGitHub(w io.Writer, fs []changelog.Finding) {
	for _, f := range standing(fs) {
		cmd := "notice"
		switch f.Severity {
		case changelog.Error:
			cmd = "error"
		case changelog.Warning:
			cmd = "warning"
		}
		props := "file=" + ghProp(f.File)
		if f.Line > 0 {
			props += fmt.Sprintf(",line=%d", f.Line)
		}
		props += ",title=" + ghProp(f.Rule)
		fmt.Fprintf(w, "::%s %s::%s\n", cmd, props, ghData(withDetails(f)))
	}
}

// Replacers are built once: a strings.Replacer builds its tables on first
// use, which costs more than the replacing.
var (
	ghDataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghPropEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	parenEscaper  = strings.NewReplacer("(", "%28", ")", "%29")
	mdCodeEscaper = strings.NewReplacer("|", `\|`, "`", "'", "\n", " ")
)

// ghData is a workflow command's message: its lines kept (GitHub shows
// %0A as a line break), what a terminal or log viewer would act on
// escaped (printable).
func ghData(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return ghDataEscaper.Replace(strings.Join(lines, "\n"))
}

func ghProp(s string) string { return ghPropEscaper.Replace(printable(s)) }

// writeMarkdown renders findings as a PR comment a reviewer reads in ten
// seconds: the verdict, then each finding with its rule, a link to its
// line at head and the evidence.
func writeMarkdown(w io.Writer, rep *changelog.Report, h verifyHeader, repo string) error {
	s := countFindings(rep.Findings)
	verdict := "✅ passed"
	if s.Errors > 0 {
		verdict = "❌ failed"
	}
	fmt.Fprintf(w, "### perflog changelog verify: %s\n\n", verdict)
	fmt.Fprintf(w, "%d error%s, %d warning%s, %d info · profile `%s` · base `%s` → head `%s`", s.Errors, plural(s.Errors), s.Warnings, plural(s.Warnings), s.Infos, rep.Profile, shortHash(h.base), shortHash(h.head))
	if h.pr > 0 {
		fmt.Fprintf(w, " · PR #%d", h.pr)
	}
	fmt.Fprint(w, "\n\n")
	if err := writeMarkdownFindings(w, rep.Findings, h.head.String(), repo); err != nil {
		return err
	}
	switch n, rules := fixable(rep.Findings, h.pr); {
	case n == 0 || rep.FixNothing: // (what it would repair is a correction it keeps)
	case rep.FixRefused == "":
		fmt.Fprintf(w, "\n`perflog changelog fix%s` repairs %s (`%s`) in the work tree; commit what it writes.\n", prArg(h.pr), findingsText(n), strings.Join(rules, "`, `"))
	default:
		fmt.Fprintf(w, "\n`perflog changelog fix` cannot repair this file: %s\n", mdInert(rep.FixRefused))
	}
	if len(rep.Suggested) > 0 {
		// a fence longer than any run of backticks in the entries
		fence := "```"
		var body strings.Builder
		for i, e := range rep.Suggested {
			if i > 0 {
				body.WriteString("\n")
			}
			body.WriteString(changelog.RenderEntry(e))
		}
		for strings.Contains(body.String(), fence) {
			fence += "`"
		}
		path := "the changelog"
		if rep.Head != nil {
			path = mdInert(rep.Head.Path)
		}
		fmt.Fprintf(w, "\n#### Suggested entry\n\nThe recipes above changed without an entry. Append this to %s (`perflog changelog new` writes it), then edit the bullets:\n\n%syaml\n%s%s\n", path, fence, body.String(), fence)
	}
	return nil
}

// writeMarkdownFindings is the findings' table of a markdown report, each
// place linked at rev in repo on GitHub (plain when repo or rev is "").
func writeMarkdownFindings(w io.Writer, fs []changelog.Finding, rev, repo string) error {
	if len(standing(fs)) == 0 {
		return nil
	}
	link := func(file string, line int) string {
		where := file
		if line > 0 {
			where = fmt.Sprintf("%s:%d", file, line)
		}
		if repo == "" || rev == "" {
			return mdInert(where)
		}
		u := fmt.Sprintf("https://github.com/%s/blob/%s/%s", repo, rev, parenEscaper.Replace((&url.URL{Path: file}).EscapedPath()))
		if line > 0 {
			u += fmt.Sprintf("#L%d", line)
		}
		return fmt.Sprintf("[%s](%s)", mdInert(where), u)
	}
	t := tablewriter.NewTable(w, tablewriter.WithRenderer(renderer.NewMarkdown()), tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("", "rule", "where", "finding")
	for _, f := range standing(fs) {
		icon := "ℹ️"
		switch f.Severity {
		case changelog.Error:
			icon = "❌"
		case changelog.Warning:
			icon = "⚠️"
		}
		msg := mdInert(f.Message)
		for _, e := range f.Evidence {
			if e.File == f.File && e.Line == f.Line {
				continue
			}
			if e.Rev == "head" {
				msg += "<br>↳ " + link(e.File, e.Line) + " `" + mdCode(e.Text) + "`"
			} else {
				msg += "<br>↳ " + e.Rev + " `" + fmt.Sprintf("%s:%d", e.File, e.Line) + "` `" + mdCode(e.Text) + "`"
			}
		}
		for _, d := range f.Details {
			msg += "<br>↳ also " + mdInert(d)
		}
		if err := t.Append([]string{icon, "`" + f.Rule + "`", link(f.File, f.Line), msg}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n<sub>perflog: rule ids are listed by `perflog changelog rules`; severities can be set in `.perflog.yaml`.</sub>")
	return nil
}

// mdInert makes text from the repository inert inside a Markdown table
// cell: a code span, which GitHub renders as it is (no link, image,
// mention, reference or HTML), with no backtick to end it early and no
// pipe to end the cell.
func mdInert(s string) string {
	if s == "" {
		return ""
	}
	return "`" + mdCodeEscaper.Replace(printable(s)) + "`"
}

func mdCode(s string) string {
	return mdCodeEscaper.Replace(ellipsize(printable(s), 120))
}

// SARIF 2.1.0 (the subset code scanning reads).
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	ShortDescription     sarifText     `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf `json:"defaultConfiguration"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID           string             `json:"ruleId"`
	RuleIndex        int                `json:"ruleIndex"`
	Level            string             `json:"level"`
	Message          sarifText          `json:"message"`
	Locations        []sarifLocation    `json:"locations"`
	RelatedLocations []sarifLocation    `json:"relatedLocations,omitempty"`
	Suppressions     []sarifSuppression `json:"suppressions,omitempty"`
}

// sarifSuppression is a perflog:ignore comment's (SARIF 2.1.0 §3.35).
type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

type sarifLocation struct {
	ID               int           `json:"id,omitempty"`
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
	Message          *sarifText    `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

func sarifLevel(s changelog.Severity) string {
	switch s {
	case changelog.Error:
		return "error"
	case changelog.Warning:
		return "warning"
	}
	return "note"
}

func sarifLoc(file string, line int) sarifPhysical {
	p := sarifPhysical{ArtifactLocation: sarifArtifact{URI: file}}
	if line > 0 {
		p.Region = &sarifRegion{StartLine: line}
	}
	return p
}

// writeSARIF renders findings as SARIF 2.1.0 for code-scanning upload.
func writeSARIF(w io.Writer, fs []changelog.Finding) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "perflog", InformationURI: "https://github.com/perflog/perflog"}}, Results: []sarifResult{}}
	index := map[string]int{}
	for _, r := range changelog.Rules {
		index[r.ID] = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: r.ID, ShortDescription: sarifText{r.Summary}, DefaultConfiguration: sarifRuleConf{sarifLevel(r.Severity)}})
	}
	for _, f := range fs {
		i, ok := index[f.Rule]
		if !ok {
			i = len(run.Tool.Driver.Rules)
			index[f.Rule] = i
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: f.Rule, ShortDescription: sarifText{f.Rule}, DefaultConfiguration: sarifRuleConf{sarifLevel(f.Severity)}})
		}
		res := sarifResult{RuleID: f.Rule, RuleIndex: i, Level: sarifLevel(f.Severity), Message: sarifText{withDetails(f)},
			Locations: []sarifLocation{{PhysicalLocation: sarifLoc(f.File, f.Line)}}}
		if f.Suppressed != "" {
			res.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: f.Suppressed}}
		}
		for k, e := range f.Evidence {
			if e.Rev != "head" {
				continue // code scanning shows locations of the analysed commit only
			}
			res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: k + 1, PhysicalLocation: sarifLoc(e.File, e.Line), Message: &sarifText{e.Text}})
		}
		run.Results = append(run.Results, res)
	}
	enc := jsonEncoder(w)
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// printf is fmt.Fprintf with every string argument made printable: a
// value the repository gave can neither end the line (and start another,
// a workflow command in a CI log) nor move the terminal's cursor.
func printf(w io.Writer, format string, a ...any) {
	for i, v := range a {
		if s, ok := v.(string); ok {
			a[i] = printable(s)
		}
	}
	fmt.Fprintf(w, format, a...)
}

// printable makes a source line safe to print on a terminal: invalid
// UTF-8 and control characters (a binary file, an escape sequence in a
// script) are shown escaped, as Go quotes them; tabs stay.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r != '\t' && unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
