package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/perflog/perflog/internal/iostreams"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
)

// TestPrintable: a source excerpt prints escaped where it is not text
// (a binary file, a terminal escape), as it is otherwise.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"ARGS=(--tp 8)":    "ARGS=(--tp 8)",
		"\tcmd \\ ":        "\tcmd \\ ",
		"échelle ✓":        "échelle ✓",
		"$,\xff\xfe x":     `$,\xff\xfe x`,
		"echo \x1b[31mred": `echo \x1b[31mred`,
		"a\rb":             `a\rb`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQueryJSON: query --format json keeps the statement's column order,
// names a repeated column apart instead of dropping one of its values, and
// writes '<', '>' and '&' as they are.
func TestQueryJSON(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	res := &index.Result{Columns: []string{"z", "id", "id", "id_2", "a"},
		Rows: [][]any{{"x -> y & <z>", int64(1), int64(2), nil, 1.5}}}
	if err := writeResult(&Factory{IO: io}, "json", res); err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "z": "x -> y & <z>",
    "id": 1,
    "id_3": 2,
    "id_2": null,
    "a": 1.5
  }
]
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 1 || len(rows[0]) != 5 {
		t.Errorf("%v %v", rows, err)
	}
	if got := uniqueNames([]string{"a", "a", "a"}); !slices.Equal(got, []string{"a", "a_2", "a_3"}) {
		t.Errorf("uniqueNames: %v", got)
	}
}

// TestProgressText: a stage whose total is not known yet shows its count
// alone, never "n/0".
func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		pr   provenance.Progress
		want string
	}{
		{provenance.Progress{Stage: "read", Done: 704}, "704 file versions"},
		{provenance.Progress{Stage: "claims", Done: 3, Total: 40}, "3/40 introducing commits"},
		{provenance.Progress{Stage: "walk", Done: 1200}, "1200 commits"},
	} {
		if got := progressText(c.pr); got != c.want {
			t.Errorf("%+v: %q, want %q", c.pr, got, c.want)
		}
	}
}
