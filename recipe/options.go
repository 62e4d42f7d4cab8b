package recipe

import (
	"io/fs"
	"regexp"
	"strings"

	"github.com/perflog/perflog/recipe/revfs"
)

// scriptsDir holds the benchmark scripts that start the servers.
const scriptsDir = "benchmarks"

// reOption is an option a script passes: "--name" with at least one
// hyphen inside the name (the form a bullet writes without dashes).
var reOption = regexp.MustCompile(`(?:^|[\s"'=(\[{,])--([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`)

// Options are the options the revision's benchmark scripts pass, by name
// without the dashes ("disable-radix-cache"): read from their code, not
// their comments. It is the vocabulary a bullet's option names written
// without dashes are read against. With a SweepCache each script's
// options are read once per content.
func (r *Rev) Options() map[string]bool {
	if r.options != nil {
		return r.options
	}
	r.options = map[string]bool{}
	h, _ := r.Files.(revfs.Hasher)
	_ = fs.WalkDir(r.Files, scriptsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sh") {
			return nil
		}
		id := ""
		if h != nil && r.sweep != nil {
			id = h.PathID(p, false)
		}
		names, ok := []string(nil), false
		if id != "" {
			names, ok = r.sweep.options.Get(id)
		}
		if !ok {
			data, found, err := revfs.ReadFile(r.Files, p)
			if err != nil || !found {
				return nil
			}
			names = scriptOptions(string(data))
			if id != "" {
				r.sweep.options.Put(id, names)
			}
		}
		for _, n := range names {
			r.options[n] = true
		}
		return nil
	})
	return r.options
}

// CodeOf is a shell or YAML line without its comment: from a "#" that
// opens the line or follows a blank.
func CodeOf(l string) string {
	for j := strings.IndexByte(l, '#'); j >= 0; {
		if j == 0 || l[j-1] == ' ' || l[j-1] == '\t' {
			return l[:j]
		}
		k := strings.IndexByte(l[j+1:], '#')
		if k < 0 {
			break
		}
		j += k + 1
	}
	return l
}

// scriptOptions are the option names in a script's code.
func scriptOptions(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, "--") {
			continue
		}
		for _, m := range reOption.FindAllStringSubmatch(CodeOf(l), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}
