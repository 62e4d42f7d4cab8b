package index

import "testing"

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
