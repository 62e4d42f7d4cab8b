package changelog

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflog/perflog/internal/pyyaml"
)

// TestSchemaMessageCutsWholeCharacters: a long value quoted in a schema
// message is cut to 60 characters, never inside one.
func TestSchemaMessageCutsWholeCharacters(t *testing.T) {
	// pr-link as a mapping whose repr passes 60 characters, with a
	// two-byte character where a cut by bytes would fall
	v, err := pyyaml.Load([]byte("config-keys: [a]\ndescription: [b]\npr-link: {kk: "+strings.Repeat("é", 60)+"}\n"), pyyaml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, errs := validate(v)
	var msg string
	for _, e := range errs {
		if e.Field == FieldPRLink {
			msg = e.Msg
		}
	}
	if msg == "" {
		t.Fatalf("no pr-link error: %+v", errs)
	}
	if !utf8.ValidString(msg) || !strings.HasSuffix(msg, "...") {
		t.Errorf("message %q: not valid UTF-8 or not cut", msg)
	}
	if i := strings.Index(msg, "{"); i < 0 || utf8.RuneCountInString(msg[i:]) != 60 {
		t.Errorf("message %q: the value is not cut to 60 characters", msg)
	}
}
