package assockeys

import (
	"bytes"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestQuote: a script with colon keys, which mvdan.cc/sh refuses, parses
// once quoted, line for line; a ternary and plain indexes are untouched.
func TestQuote(t *testing.T) {
	src := []byte(`declare -A M=(
  [1024:4:4:false:4]=4
  [8192:8:1:true:2]=6
)
N="${M[${ISL}:${TP}:${EP}:${DPA}:${CONC}]:-3}"
x=$(( a ? b : c ))
arr[1]=2
echo "${arr[i+1]}"
`)
	parse := func(b []byte) error {
		_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(b), "s.sh")
		return err
	}
	if parse(src) == nil {
		t.Fatal("the unquoted script parses: the test shows nothing")
	}
	got := Quote(src)
	if err := parse(got); err != nil {
		t.Fatalf("quoted, it still does not parse: %v\n%s", err, got)
	}
	want := []string{`  ["1024:4:4:false:4"]=4`, `N="${M["${ISL}:${TP}:${EP}:${DPA}:${CONC}"]:-3}"`, `x=$(( a ? b : c ))`, `arr[1]=2`, `echo "${arr[i+1]}"`}
	lines := strings.Split(string(got), "\n")
	if len(lines) != len(strings.Split(string(src), "\n")) {
		t.Fatal("the line count changed")
	}
	for _, w := range want {
		if !strings.Contains(string(got), w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
}
