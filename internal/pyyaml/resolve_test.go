package pyyaml

import (
	"strings"
	"testing"
)

// resolveByRegexps is Resolve as PyYAML does it: each resolver registered
// for the first character, tried in order.
func resolveByRegexps(s string) string {
	if s == "" {
		return "!!null"
	}
	switch c := s[0]; {
	case strings.IndexByte("yYnNtTfFoO", c) >= 0 && reBool.MatchString(s):
		return "!!bool"
	case strings.IndexByte("-+0123456789.", c) >= 0 && reFloat.MatchString(s):
		return "!!float"
	case strings.IndexByte("-+0123456789", c) >= 0 && reInt.MatchString(s):
		return "!!int"
	case c == '<' && reMerge.MatchString(s):
		return "!!merge"
	case strings.IndexByte("~nN", c) >= 0 && reNull.MatchString(s):
		return "!!null"
	case strings.IndexByte("0123456789", c) >= 0 && reTime.MatchString(s):
		return "!!timestamp"
	case c == '=' && reValue.MatchString(s):
		return "!!value"
	}
	return "!!str"
}

// resolveSeeds are scalars of every tag and near misses.
var resolveSeeds = []string{
	"", "~", "null", "Null", "NULL", "nul", "yes", "No", "ON", "oFF", "true", "TRUE", "tRue", "<<", "<", "=", "==",
	"0", "00", "07", "08", "0755", "0o7", "123", "1_000", "-1", "+1", "-0", "0x1F", "0xg", "0b101", "0b2", "1:30", "190:20:30",
	"1.5", "1.", ".5", "-.5", "1e5", "1.0e+5", "1.0e5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "6.8523015e+5", "1:30.5",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14", "2001-1-1", "2001-1-1T1:00:00Z",
	"8", "128", "4096", "v0.5.5", "0.5.5", "1.2.3", "nvcr.io/nvidia/x:1.0", "1-2", "12-34", "+", "-", ".", "-.", "1 2", "1\t2",
	"lmsysorg/sglang:v0.5.5-rocm700-mi35x", "dsr1-fp8-h200-dynamo-trt", "9999999999999999999999", "0_0",
}

// sameAsRegexps fails t unless Resolve answers for s as the resolvers'
// regular expressions do.
func sameAsRegexps(t *testing.T, s string) {
	t.Helper()
	if got, want := Resolve(s), resolveByRegexps(s); got != want {
		t.Fatalf("Resolve(%q) = %s, want %s", s, got, want)
	}
}

// TestResolveAsPyYAML: the shortcuts of Resolve answer as the resolvers'
// regular expressions do.
func TestResolveAsPyYAML(t *testing.T) {
	for _, s := range resolveSeeds {
		sameAsRegexps(t, s)
	}
	// every string of up to four characters from the ones that matter
	const alphabet = "01789+-._:eExbTZ n"
	var grow func(s string, n int)
	grow = func(s string, n int) {
		sameAsRegexps(t, s)
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			grow(s+alphabet[i:i+1], n-1)
		}
	}
	grow("", 4)
}

func FuzzResolve(f *testing.F) {
	for _, s := range resolveSeeds {
		f.Add(s)
	}
	f.Fuzz(sameAsRegexps)
}
