package main

import (
	"fmt"
	"io"
	"strings"

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
	for _, f := range rep.Findings {
		if f.Entry != group || f.Entry == 0 {
			if group != -1 {
				fmt.Fprintln(w)
			}
			group = f.Entry
			switch {
			case f.Entry > 0 && rep.Head != nil && f.Entry <= len(rep.Head.Entries):
				e := rep.Head.Entries[f.Entry-1]
				fmt.Fprintf(w, "%s\n", paint(ansiBold, fmt.Sprintf("%s:%d: entry %d (lines %d-%d)", f.File, e.Line, e.Index, e.Line, e.EndLine)))
			case f.Line > 0:
				fmt.Fprintf(w, "%s\n", paint(ansiBold, fmt.Sprintf("%s:%d:", f.File, f.Line)))
			default:
				fmt.Fprintf(w, "%s\n", paint(ansiBold, f.File+":"))
			}
		}
		src := f.Source
		if src == "" {
			src = lineText(f.Line)
		}
		if f.Line > 0 && src != "" {
			fmt.Fprintf(w, "  %5d | %s\n", f.Line, src)
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
		fmt.Fprintf(w, "  %s %s: %s\n", sev, f.Rule, f.Message)
		for _, e := range f.Evidence {
			if e.File == f.File && e.Line == f.Line {
				continue
			}
			fmt.Fprintf(w, "        %s %s:%d %s\n", paint(ansiCyan, e.Rev), e.File, e.Line, e.Text)
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
	fmt.Fprintf(w, "%s: %d error%s, %d warning%s, %d note%s (profile %s; base %s %s, head %s %s; %s)\n",
		verdict, s.Errors, plural(s.Errors), s.Warnings, plural(s.Warnings), s.Infos, plural(s.Infos),
		rep.Profile, h.baseName, shortHash(h.base), h.headName, shortHash(h.head), pr)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeGitHub prints GitHub Actions workflow commands, one per finding.
func writeGitHub(w io.Writer, fs []changelog.Finding) {
	for _, f := range fs {
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
		fmt.Fprintf(w, "::%s %s::%s\n", cmd, props, ghData(f.Message))
	}
}

func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
