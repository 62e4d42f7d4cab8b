package changelog

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPRFromEnv(t *testing.T) {
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	if err := os.WriteFile(event, []byte(`{"pull_request": {"number": 2710}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	push := filepath.Join(dir, "push.json")
	if err := os.WriteFile(push, []byte(`{"ref": "refs/heads/main"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env     map[string]string
		pr      int
		source  string
		wantErr bool
	}{
		{map[string]string{}, 0, "", false},
		{map[string]string{"GITHUB_REF": "refs/pull/42/merge"}, 42, "GITHUB_REF", false},
		{map[string]string{"GITHUB_REF": "refs/heads/main", "GITHUB_EVENT_PATH": event}, 2710, "GITHUB_EVENT_PATH", false},
		{map[string]string{"GITHUB_EVENT_PATH": push}, 0, "", false},
		{map[string]string{"GITHUB_EVENT_PATH": bad}, 0, "", true},
		{map[string]string{"GITHUB_EVENT_PATH": dir}, 0, "", true}, // not a regular file
		{map[string]string{"GITHUB_EVENT_PATH": filepath.Join(dir, "none")}, 0, "", true},
	} {
		pr, src, err := PRFromEnv(func(k string) string { return c.env[k] })
		if pr != c.pr || src != c.source || (err != nil) != c.wantErr {
			t.Errorf("%v: %d %q %v; want %d %q error %v", c.env, pr, src, err, c.pr, c.source, c.wantErr)
		}
	}
}
