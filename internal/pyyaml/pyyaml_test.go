package pyyaml

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The YAML 1.1 table of ../shared/reference/go-libs.md: what PyYAML's
// SafeLoader makes of scalars where yaml.v3 differs.
func TestYAML11Scalars(t *testing.T) {
	cases := map[string]string{
		"yes": "True", "No": "False", "on": "True", "OFF": "False", "y": "'y'", "n": "'n'",
		"1e3": "'1e3'", "6.02e23": "'6.02e23'", "1.0e+3": "1000.0", "08": "'08'", "0o17": "'0o17'",
		"017": "15", "0x1F": "31", "0b101": "5", "1_000": "1000", "1:20": "80", "1:20.5": "80.5",
		"~": "None", "null": "None", "": "None", ".inf": "inf", "-.Inf": "-inf", "2024-01-01": "date:2024-01-01",
		"'yes'": "'yes'", "\"08\"": "'08'", "!!str 123": "'123'", "!!int '7'": "7",
	}
	for in, want := range cases {
		v, err := Load([]byte("k: "+in), Options{})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		got, _ := v.Get("k")
		if got.Repr() != want {
			t.Errorf("%q → %s, want %s", in, got.Repr(), want)
		}
	}
}

func TestLoaderDifferences(t *testing.T) {
	errs := map[string]string{
		"a: =":            "constructor",
		"a:\tb":           "'\\t'",
		"[1,\t2]":         "'\\t'",
		"a: 1\n---\nb: 2": "single document",
		"a: \x01":         "unacceptable character",
		"a: !foo x":       "constructor",
		"a: 2024-13-01":   "timestamp",
	}
	for in, want := range errs {
		if _, err := Load([]byte(in), Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) err = %v, want %q", in, err, want)
		}
	}
	ok := []string{"a: 'b\tc'", "a: b #\tc", "a: |\n  x\ty\n", "a: \"x\n\ty\""}
	for _, in := range ok {
		if _, err := Load([]byte(in), Options{}); err != nil {
			t.Errorf("Load(%q): %v (PyYAML accepts tabs there)", in, err)
		}
	}
	// duplicate keys: last wins, or an error with UniqueKeys; Python
	// equality makes 1, 1.0 and true the same key
	v, err := Load([]byte("a: 1\na: 2\n1: x\ntrue: y\n"), Options{})
	if err != nil || v.Repr() != "{'a': 2, 1: 'y'}" {
		t.Fatalf("last wins: %v %v", v.Repr(), err)
	}
	if _, err := Load([]byte("a: 1\na: 2\n"), Options{UniqueKeys: true}); err == nil || !err.(*Error).Duplicate || err.(*Error).Line != 2 {
		t.Fatalf("UniqueKeys duplicate: %v", err)
	}
	// merge keys flatten in SafeLoader and fail in UniqueKeyLoader
	v, err = Load([]byte("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n"), Options{})
	if c, _ := v.Get("c"); err != nil || c.Repr() != "{'x': 1, 'y': 3}" {
		t.Fatalf("merge: %v %v", v.Repr(), err)
	}
	if _, err := Load([]byte("c:\n  <<: {x: 1}\n"), Options{UniqueKeys: true}); err == nil {
		t.Fatal("UniqueKeyLoader must reject merge keys")
	}
	if v, err := Load([]byte("# only a comment\n"), Options{}); err != nil || v.Kind != Null {
		t.Fatalf("empty stream: %v %v", v, err)
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{"- config-keys:\n    - a\n  description:\n    - b\n  pr-link: x\n", "a: [1, {b: c}]", "<<: *x", "a: &x 1\nb: *x", "? [a]\n: b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []Options{{}, {UniqueKeys: true}} {
			v, err := Load([]byte(s), o)
			if err == nil {
				_ = v.Repr()
				_ = Equal(v, v)
			}
		}
	})
}

// TestAliasExpansionBound: nested aliases that expand past maxExpanded
// nodes (the "billion laughs") are an error, quickly; anchors used a few
// times, as configs use them, load as before.
func TestAliasExpansionBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	_, err := Load([]byte(b.String()), Options{})
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "aliases expand") {
		t.Fatalf("a billion laughs: %v", err)
	}
	v, err := Load([]byte("base: &b {tp: 8, conc: [4, 8]}\nr1: *b\nr2: *b\nr3: {<<: *b, ep: 2}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// the root; base, r1 and r2 are a key and {tp: 8, conc: [4, 8]} (1+2+4
	// nodes); r3 is a key and that map merged with ep: 2 (two more)
	if n := expanded(v, map[*Value]int64{}, maxExpanded); n != 1+3*8+10 {
		t.Fatalf("expanded %d nodes, want 35", n)
	}
	if r1, _ := v.Get("r1"); r1 == nil || r1.Kind != Map {
		t.Fatalf("an alias did not load: %v", v)
	}
}
