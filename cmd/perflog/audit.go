package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/provenance"
)

// AuditOptions are the parsed flags of `perflog changelog audit`.
type AuditOptions struct {
	Factory *Factory
	HistoryFlags
	Key string
	// Claims is "" (no claim check), "contradicted" or "all".
	Claims string
}

func newAuditCmd(f *Factory, runF func(context.Context, *AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Attribute every changelog entry to the PR that introduced it",
		Long: `Audit attributes every entry of perf-changelog.yaml at --rev to the
first-parent commit and PR that introduced its content, and judges its pr-link.

An entry's identity is its config-keys, description and flags: a later pr-link
correction, a re-indent or moving the entry does not change who introduced it;
an in-place edit does (unless the editing commit is an ignored revision). Each
entry's lifecycle is listed: introduced, pr-link-changed, edited, removed,
reverted, re-added.

Verdicts:
  ok           the pr-link names the PR that introduced the entry
  corrected    ok, after a later pr-link-only change fixed the link
  relanded     re-added after a revert; links the PR of the earlier entry
  edited       edited in place later; links the PR that wrote it before
  backfilled   links a PR that predates the changelog
  placeholder  no pull-request link (XXX, TBD, empty)
  no-pr        the introducing commit names no PR: the link cannot be checked
  mismatch     the link points at another PR (e.g. copied from another entry)
  retrigger    repeats an earlier entry and links its PR: a re-run of that sweep

A table on a terminal, tab-separated values otherwise, or --format json.`,
		Example: `  $ perflog changelog audit
  $ perflog changelog audit --key 'dsv4-*' --format json
  $ perflog changelog audit --rev v1.2 --ignore-rev ebe60759dc`,
		Args: func(cmd *cobra.Command, args []string) error {
			// "--claims all" as well as "--claims=all": a bare --claims
			// takes the next word when it is a verdict set
			if len(args) == 1 && cmd.Flags().Changed("claims") && opts.Claims == "contradicted" && contains([]string{"all", "contradicted"}, args[0]) {
				opts.Claims = args[0]
				return nil
			}
			return argsFor()(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !contains(listFormats, opts.Format) {
				return flagErrorf("invalid --format %q (want table, tsv, json or csv)", opts.Format)
			}
			if !contains([]string{"", "contradicted", "all"}, opts.Claims) {
				return flagErrorf("invalid --claims %q (want contradicted or all)", opts.Claims)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return auditRun(cmd.Context(), opts)
		},
	}
	opts.addFlags(cmd.Flags(), "table, tsv, json or csv (default: table on a terminal, else tsv)")
	cmd.Flags().StringVar(&opts.Key, "key", "", "only entries whose config-keys match this `glob` ('*' wildcards)")
	cmd.Flags().StringVar(&opts.Claims, "claims", "", "check each entry's description claims against the commit that introduced it; list the `verdicts` contradicted (the default of a bare --claims) or all")
	cmd.Flags().Lookup("claims").NoOptDefVal = "contradicted"
	return cmd
}

// auditResult is the JSON document of --format json. Field names are a
// public contract: add, never rename.
type auditResult struct {
	Rev     string                     `json:"rev"`
	File    string                     `json:"file"`
	Entries []provenance.AuditEntry    `json:"entries"`
	Summary map[provenance.Verdict]int `json:"summary"`
	Notes   []noteJSON                 `json:"notes"`
	// SchemaVersion: see jsonSchemaVersion.
	SchemaVersion int `json:"schema_version"`
}

// writeAuditJSON writes res as jsonEncoder does, the entries one at a
// time (see writeJSONList).
func writeAuditJSON(w io.Writer, res auditResult) error {
	entries := res.Entries
	res.Entries = []provenance.AuditEntry{}
	var doc bytes.Buffer
	if err := jsonEncoder(&doc).Encode(res); err != nil {
		return err
	}
	head, tail, ok := bytes.Cut(doc.Bytes(), []byte(`"entries": []`))
	if !ok || len(entries) == 0 {
		_, err := w.Write(doc.Bytes())
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	bw.WriteString(`"entries": `)
	if err := writeJSONList(bw, "  ", len(entries), func(i int) any { return &entries[i] }); err != nil {
		return err
	}
	bw.Write(tail)
	return bw.Flush()
}

type noteJSON struct {
	Commit  string `json:"commit"`
	File    string `json:"file"`
	Message string `json:"message"`
}

func notesJSON(ns []provenance.Note) []noteJSON {
	out := []noteJSON{}
	for _, n := range ns {
		out = append(out, noteJSON{Commit: n.Commit.String(), File: n.Path, Message: n.Message})
	}
	return out
}

func auditRun(ctx context.Context, opts *AuditOptions) error {
	hs, err := openHistory(opts.Factory, &opts.HistoryFlags)
	if err != nil {
		return err
	}
	defer hs.close()
	rep, err := hs.src.Audit(ctx, opts.Key)
	if err != nil {
		return err
	}
	if opts.Claims != "" {
		if err := auditClaims(ctx, opts, hs, rep); err != nil {
			return err
		}
	}
	out := opts.Factory.IO.Out
	if opts.Format == "json" {
		res := auditResult{SchemaVersion: jsonSchemaVersion, Rev: rep.Rev.String(), File: rep.Path, Entries: rep.Entries, Summary: rep.Summary, Notes: notesJSON(rep.Notes)}
		if res.Entries == nil {
			res.Entries = []provenance.AuditEntry{}
		}
		for i := range res.Entries {
			res.Entries[i].Named()
		}
		return writeAuditJSON(out, res)
	}
	header := []string{"ENTRY", "LINE", "CONFIG-KEYS", "LINK", "INTRODUCED", "PR", "DATE", "VERDICT", "WHY"}
	rows := make([][]string, 0, len(rep.Entries))
	for _, e := range rep.Entries {
		intro, pr, date := "-", "-", "-"
		if e.Introduced != nil {
			intro, pr, date = shortSHA(e.Introduced.Commit), prText(e.Introduced.PR), dateText(e.Introduced.Date)
		}
		keys := strings.Join(e.ConfigKeys, ",")
		if boxed(opts.Factory, opts.Format) {
			keys = ellipsize(keys, 48)
		}
		rows = append(rows, []string{fmt.Sprint(e.Index), fmt.Sprint(e.Line), keys, prText(e.PRLinkPR),
			intro, pr, date, string(e.Verdict), e.Reason})
	}
	// on a narrow terminal the line and the commit go first: the entry
	// number and the PR say as much
	if err := printTable(opts.Factory, opts.Format, header, rows, "LINE", "INTRODUCED", "DATE"); err != nil {
		return err
	}
	if opts.Claims != "" {
		if err := printClaims(opts.Factory, opts.Format, rep); err != nil {
			return err
		}
	}
	errOut := opts.Factory.IO.ErrOut
	var parts []string
	for _, v := range provenance.Verdicts {
		if n := rep.Summary[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	switch {
	case len(parts) > 0:
		fmt.Fprintf(errOut, "%d entries at %s: %s\n", len(rep.Entries), shortHash(rep.Rev), strings.Join(parts, ", "))
	case opts.Key != "":
		printf(errOut, "0 entries at %s: none names a key matching %q\n", shortHash(rep.Rev), opts.Key)
	default:
		fmt.Fprintf(errOut, "0 entries at %s%s\n", shortHash(rep.Rev), absentAt(hs, rep))
	}
	for _, n := range rep.Notes {
		printf(errOut, "note: %s at %s %s; the previous version stands for it\n", n.Path, shortHash(n.Commit), n.Message)
	}
	return nil
}

// auditClaims checks each entry's claims against its introducing commit,
// keeping the verdicts --claims asks for.
func auditClaims(ctx context.Context, opts *AuditOptions, hs *history, rep *provenance.AuditReport) error {
	if err := hs.src.Claims(ctx, rep); err != nil {
		return err
	}
	if opts.Claims == "all" {
		return nil
	}
	for i := range rep.Entries {
		rep.Entries[i].Claims = slices.DeleteFunc(rep.Entries[i].Claims, func(c claims.Result) bool {
			return c.Verdict != claims.Contradicted
		})
	}
	return nil
}

// printClaims lists the checked claims of an audit after its table.
func printClaims(f *Factory, format string, rep *provenance.AuditReport) error {
	header := []string{"ENTRY", "LINE", "KIND", "CLAIM", "VERDICT", "WHY", "EVIDENCE"}
	var rows [][]string
	counts := map[string]int{}
	for _, e := range rep.Entries {
		for _, c := range e.Claims {
			counts[c.Verdict]++
			var ev []string
			for _, x := range c.Evidence {
				ev = append(ev, x.Rev+":"+x.String())
			}
			rows = append(rows, []string{fmt.Sprint(e.Index), fmt.Sprint(c.Line), c.Kind, c.Text, c.Verdict, c.Reason, strings.Join(ev, " ")})
		}
	}
	fmt.Fprintln(f.IO.Out)
	if err := printTable(f, format, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "claims: %d contradicted, %d unverified, %d confirmed\n", counts[claims.Contradicted], counts[claims.Unverified], counts[claims.Confirmed])
	return nil
}

// absentAt says why an audit found no entries when the changelog does not
// exist at the audited commit ("" otherwise, or when that cannot be told).
func absentAt(hs *history, rep *provenance.AuditReport) string {
	if _, ok, err := hs.ws.repo.FileHash(rep.Rev, rep.Path); err != nil || ok {
		return ""
	}
	return ": " + rep.Path + " does not exist there"
}
