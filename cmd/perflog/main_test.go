package main

import (
	"context"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/iostreams"
)

// TestNamesTable: query fills a check table when its statement names it
// as a word, in any case, and not for a longer name that contains it.
func TestNamesTable(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT * FROM claims":                       true,
		"select count(*) from CLAIMS c":              true,
		"SELECT * FROM entries JOIN claims ON 1":     true,
		"SELECT (SELECT count(*) FROM claims)":       true,
		"SELECT 1 AS myclaims":                       false,
		"SELECT * FROM claims_checked":               false,
		"SELECT * FROM entries WHERE x = 'claims_x'": false,
		"SELECT * FROM entries":                      false,
		"SELECT * FROM myclaims, claims2, claims":    true,
		"SELECT 'İİİ' FROM claims":                   true,
		"SELECT 'İİİİİİ' AS claimsİ":                 false,
		"SELECT 'ǅ' FROM CLAIMS":                     true,
	} {
		if got := namesTable(sql, "claims"); got != want {
			t.Errorf("namesTable(%q) = %v, want %v", sql, got, want)
		}
	}
}

// TestVersion: perflog --version names the build and the Go version.
func TestVersion(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	root := newRootCmd(newFactory(io))
	root.SetArgs([]string{"--version"})
	root.SetOut(out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "perflog ") || !strings.Contains(got, ", go1.") {
		t.Fatalf("--version printed %q", got)
	}
	// the subcommand prints the same line
	io2, _, out2, _ := iostreams.Test()
	if code := run(context.Background(), newFactory(io2), []string{"version"}); code != 0 || out2.String() != out.String() {
		t.Fatalf("version: exit %d, %q; --version %q", code, out2, out)
	}
}
