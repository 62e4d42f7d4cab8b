package pyyaml

import (
	"testing"
)

// inlineOracle is what Load makes of text as a mapping value and as a
// sequence item; ok is false when either does not load.
func inlineOracle(text string) (asValue, asItem *Value, ok bool) {
	m, err := Load([]byte("k: "+text+"\n"), Options{})
	if err != nil || m.Kind != Map || len(m.Pairs) != 1 {
		return nil, nil, false
	}
	s, err := Load([]byte("- "+text+"\n"), Options{})
	if err != nil || s.Kind != Seq || len(s.Items) != 1 {
		return nil, nil, false
	}
	return m.Pairs[0].Value, s.Items[0], true
}

func checkInline(t *testing.T, text string) (accepted bool) {
	t.Helper()
	got, ok := Inline(text)
	if !ok {
		return false
	}
	v, item, loaded := inlineOracle(text)
	if !loaded {
		t.Fatalf("Inline(%q) = %s, but Load refuses it", text, got.Repr())
	}
	if got.Repr() != v.Repr() || got.Repr() != item.Repr() {
		t.Fatalf("Inline(%q) = %s, Load gives %s (value) and %s (item)", text, got.Repr(), v.Repr(), item.Repr())
	}
	return true
}

func TestInline(t *testing.T) {
	accept := []string{
		"", "  ", "x", "lmsysorg/sglang:v0.5.2-rocm700-mi35x", "deepseek-ai/DeepSeek-R1-0528",
		"8", "-1", "0x1F", "017", "08", "1e3", "1.5", "1:20", ".inf", "yes", "Off", "~", "null",
		"2024-01-01", "a b  ", "a, b", "a:b", `"quoted: x"`, `'single "x"'`, `""`, `" padded "`,
		"[]", "{}", "[1, 2, 4, 8]", "[ a , 'b', \"c\" ]", "{tp: 8, ep: 1, dp-attn: false, conc-start: 4, conc-end: 64}",
		"{ isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4, 8] } ] }", "[[1], [], {}]",
		"{a b: c d}", "[-1, -x]", "{k: yes, n: ~}",
	}
	for _, s := range accept {
		if !checkInline(t, s) {
			t.Errorf("Inline(%q) refused; it is a shape recipes use", s)
		}
	}
	// refused: Load fails, the value is not a scalar/flow of this subset,
	// or it would need escapes, comments or merges
	refuse := []string{
		"a: b", "a:", "- a", "-", "&x a", "*x", "!!str 1", "|", ">", "%x", "@x", "`x", "? a",
		"# c", "a #c", `"quoted #x"`, `"a\"b"`, `'it''s'`, "'open", "[1, 2", "[1, 2,]", "[1,, 2]", "{a: 1, a: 2}",
		"{a}", "{a: }", "{1: a}", "{'a': 1}", "[a: 1]", "[\"a\": 1]", "=", "<<", "2024-13-01",
		"[a] b", "x\ty", "a[b]", "[[[[[[[[[1]]]]]]]]]", "caf\u00e9",
	}
	for _, s := range refuse {
		if v, ok := Inline(s); ok {
			t.Errorf("Inline(%q) = %s, want refused", s, v.Repr())
		}
	}
}

// FuzzInline holds Inline to Load: what it accepts it must construct as
// Load does, as a mapping value and as a sequence item.
func FuzzInline(f *testing.F) {
	for _, s := range []string{
		"x", "[1, 2]", "{tp: 8, ep: 1}", `"q"`, "'s'", "a:b", "-1", "1:20", "[{a: [b, {c: d}]}]", "yes",
		"{ a: 1 , b: [ x , y ] }", "0o17", "[-a]", "{a-b: .5}", "2001-12-14 21:59:43.10 -5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInline(t, s)
	})
}
