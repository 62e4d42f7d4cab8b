package main

import "testing"

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
