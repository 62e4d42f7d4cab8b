package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
)

func newRulesCmd(f *Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the rule ids verify reports",
		Long: `List every rule id with the profiles that report it and its default severity
in the full profile (override it in .perflog.yaml under rules:). A table on a
terminal, tab-separated values otherwise, or --format json.`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "json":
				enc := jsonEncoder(f.IO.Out)
				return enc.Encode(map[string]any{"rules": changelog.Rules})
			case "", "table", "tsv", "csv":
			default:
				return flagErrorf("invalid --format %q (want table, tsv, json or csv)", format)
			}
			rows := make([][]string, 0, len(changelog.Rules))
			for _, r := range changelog.Rules {
				ps := make([]string, len(r.Profiles))
				for i, p := range r.Profiles {
					ps[i] = string(p)
				}
				rows = append(rows, []string{r.ID, strings.Join(ps, ","), string(r.Severity), r.Summary})
			}
			header := []string{"RULE", "PROFILES", "SEVERITY", "DESCRIPTION"}
			return printTable(f, format, header, rows)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "output `format`: table, tsv, json or csv (default: table on a terminal, else tsv)")
	return cmd
}
