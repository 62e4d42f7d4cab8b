package iostreams

import "testing"

func TestColor(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		flag string
		tty  bool
		want bool
	}{
		{nil, "auto", true, true},
		{nil, "auto", false, false},
		{map[string]string{"NO_COLOR": "1"}, "auto", true, false},
		{map[string]string{"NO_COLOR": ""}, "auto", true, true}, // set but empty: no effect
		{map[string]string{"TERM": "dumb"}, "auto", true, false},
		{map[string]string{"CLICOLOR_FORCE": "1"}, "auto", false, true},
		{map[string]string{"CLICOLOR_FORCE": "0"}, "auto", false, false},
		{map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, "auto", false, false},
		{map[string]string{"NO_COLOR": "1"}, "always", false, true},
		{map[string]string{"CLICOLOR_FORCE": "1"}, "never", true, false},
	} {
		s, _, _, _ := Test()
		s.SetStdoutTTY(c.tty)
		s.SetColorFromEnv(func(k string) string { return c.env[k] })
		if !s.SetColor(c.flag) {
			t.Fatalf("%q rejected", c.flag)
		}
		if got := s.ColorEnabled(); got != c.want {
			t.Errorf("env %v --color %s tty %v: colour %v, want %v", c.env, c.flag, c.tty, got, c.want)
		}
	}
	s, _, _, _ := Test()
	if s.SetColor("sometimes") {
		t.Error("a bad --color value was taken")
	}
}
