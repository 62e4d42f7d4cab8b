package ghexpr

import (
	"strings"
	"testing"
)

func testContext() Context {
	backend := &Object{}
	backend.Set("name", "hicache")
	backend.Set("version", 2.0)
	config := &Object{}
	config.Set("tp", 8.0)
	config.Set("dp-attn", true)
	config.Set("exp-name", "dsr1_1k1k")
	config.Set("kv-offload-backend", backend)
	config.Set("concs", []any{4.0, 8.0})
	inputs := &Object{}
	inputs.Set("scenario-type", "agentic-coding")
	inputs.Set("require-power", false)
	inputs.Set("pp", "")
	matrix := &Object{}
	matrix.Set("config", config)
	return func(name string) (any, bool) {
		switch name {
		case "matrix":
			return matrix, true
		case "inputs":
			return inputs, true
		}
		return nil, false
	}
}

func TestEval(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"'it''s'", "it's"},
		{"matrix.config.tp", "8"},
		{"matrix.config['exp-name']", "dsr1_1k1k"},
		{"matrix.config.exp-name", "dsr1_1k1k"},
		{"matrix.config['kv-offload-backend'].name", "hicache"},
		{"matrix.config.KV-OFFLOAD-BACKEND.NAME", "hicache"},
		{"matrix.config.missing", ""},
		{"matrix.config.missing || ''", ""},
		{"matrix.config['recipe-fingerprint'] || 'none'", "none"},
		{"matrix.config.dp-attn", "true"},
		{"inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/'", "agentic/"},
		{"inputs.scenario-type == 'AGENTIC-CODING'", "true"}, // strings compare ignoring case
		{"inputs.require-power && '1' || '0'", "0"},
		{"inputs.pp != '' && inputs.pp != '1' && format('/PP{0}', inputs.pp) || ''", ""},
		{"format('{0}-{1} {{x}}', 'a', 3)", "a-3 {x}"},
		{"toJSON(matrix.config['kv-offload-backend'])", "{\n  \"name\": \"hicache\",\n  \"version\": 2\n}"},
		{"matrix.config.missing && toJson(matrix.config.missing) || ''", ""},
		{"fromJSON('{\"b\": 1, \"a\": [true, null]}').a[0]", "true"},
		{"contains(matrix.config.concs, 8)", "true"},
		{"contains('Hello', 'ELL')", "true"},
		{"1 == '1'", "true"},
		{"'' == 0", "true"},
		{"null == false", "true"}, // both coerce to 0
		{"3 < 10", "true"},
		{"'3' < '10'", "false"},
		{"!matrix.config.dp-attn", "false"},
		{"(1 == 2) || (2 == 2)", "true"},
		{"-1.5", "-1.5"},
		{"1e3", "1000"},
		{"0x10", "16"},
		{"contains(matrix.config.*, 'dsr1_1k1k')", "true"},
		{"contains(fromJSON('[{\"name\": \"a\"}, {\"name\": \"b\"}]').*.name, 'b')", "true"},
		{"join(fromJSON('[{\"n\": 1}, {\"n\": 2}]').*.n, '+')", "1+2"},
	} {
		v, err := Eval(c.expr, testContext())
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := String(v); got != c.want {
			t.Errorf("%s = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestUnknownSpreads(t *testing.T) {
	for _, c := range []struct {
		expr    string
		unknown bool
		want    string
	}{
		{"github.sha", true, ""},
		{"secrets.HF_TOKEN", true, ""},
		{"github.event.pull_request.labels", true, ""},
		{"format('{0}', github.sha)", true, ""},
		{"github.sha == 'x'", true, ""},
		{"!github.sha", true, ""},
		{"false && github.sha", false, "false"},          // decided before the unknown
		{"'x' || github.sha", false, "x"},                // decided before the unknown
		{"github.sha || 'x'", true, ""},                  // could be either
		{"contains(github.event.labels, 'a')", true, ""}, // a call on an unknown
		{"contains(github.event.pull_request.labels.*.name, 'x')", true, ""},
		{"hashFiles('a')", true, ""}, // what a run knows
		{"inputs.require-power && github.sha || '0'", false, "0"},
	} {
		v, err := Eval(c.expr, testContext())
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		_, unk := v.(Unknown)
		if unk != c.unknown || !unk && String(v) != c.want {
			t.Errorf("%s = %#v, want unknown %v (%q)", c.expr, v, c.unknown, c.want)
		}
	}
}

func TestInterpolate(t *testing.T) {
	got, unknown, err := Interpolate("${{ matrix.config.exp-name }}_tp${{ matrix.config.tp }}_${{ runner.name }}", testContext())
	if err != nil || !unknown || got != "dsr1_1k1k_tp8_<unknown:runner.name>" {
		t.Errorf("got %q, %v, %v", got, unknown, err)
	}
	got, unknown, err = Interpolate("${{ '}}' }} and ${{ 'x' }}", testContext())
	if err != nil || unknown || got != "}} and x" {
		t.Errorf("a '}}' in a string: got %q, %v, %v", got, unknown, err)
	}
}

func TestErrors(t *testing.T) {
	for _, expr := range []string{"", "'open", "a.", "a[1", "1 ==", "format(", "(1", "1 2", "@"} {
		if _, err := Eval(expr, testContext()); err == nil {
			t.Errorf("%q: no error", expr)
		}
	}
	if _, _, err := Interpolate("${{ 1", testContext()); err == nil {
		t.Error("an unclosed ${{: no error")
	}
}

func FuzzEval(f *testing.F) {
	for _, s := range []string{"matrix.config['a'].b || 'x'", "format('{0}', 1)", "!a && (b == 'c')", "fromJSON('[1,{}]')[0]", "'a''b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Eval(s, testContext())
		if err == nil {
			_ = String(v)
		}
		_, _, _ = Interpolate("${{"+s+"}}", testContext())
	})
}

func TestDeepNestingIsAnError(t *testing.T) {
	for _, s := range []string{strings.Repeat("(", 1<<20) + "1", strings.Repeat("!", 1<<20) + "1", "a" + strings.Repeat("[a", 1<<20)} {
		if _, err := Eval(s, testContext()); err == nil {
			t.Errorf("%.10s...: no error", s)
		}
	}
}
