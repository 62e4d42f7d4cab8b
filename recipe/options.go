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
	r.options, r.engines = map[string]bool{}, map[string]uint8{}
	h, _ := r.Files.(revfs.Hasher)
	_ = fs.WalkDir(r.Files, scriptsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sh") {
			return nil
		}
		id := ""
		if h != nil && r.sweep != nil {
			id = h.PathID(p, false)
		}
		v, ok := scriptVocab{}, false
		if id != "" {
			v, ok = r.sweep.options.Get(id)
		}
		if !ok {
			data, found, err := revfs.ReadFile(r.Files, p)
			if err != nil || !found {
				return nil
			}
			v = readVocab(string(data))
			if id != "" {
				r.sweep.options.Put(id, v)
			}
		}
		for _, n := range v.names {
			r.options[n] = true
			r.engines[n] |= v.engines
		}
		return nil
	})
	return r.options
}

// SpelledBy says whether a benchmark script that starts program's engine
// (vLLM, SGLang, TensorRT-LLM, ATOM: "vllm serve", "python3 -m
// sglang.launch_server") passes the option (name without dashes): that
// engine spells a setting so. Unknown engines say false.
func (r *Rev) SpelledBy(name, program string) bool {
	e := engineOf(program)
	if e == 0 {
		return false
	}
	r.Options()
	return r.engines[name]&e != 0
}

// scriptVocab is what a script's code says of its options: their names
// and the engines the script starts.
type scriptVocab struct {
	names   []string
	engines uint8
}

// engines a script may start, by what its code names.
var engineMarks = []struct {
	mark string
	bit  uint8
}{{"vllm", 1}, {"sglang", 2}, {"trtllm", 4}, {"atom.entrypoints", 8}}

// engineOf is the engine a command line or a script's text names.
func engineOf(text string) uint8 {
	var e uint8
	for _, m := range engineMarks {
		if strings.Contains(text, m.mark) {
			e |= m.bit
		}
	}
	return e
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

// readVocab reads the option names in a script's code and the engines it
// names there.
func readVocab(text string) scriptVocab {
	seen := map[string]bool{}
	var v scriptVocab
	for _, l := range strings.Split(text, "\n") {
		code := CodeOf(l)
		v.engines |= engineOf(code)
		if !strings.Contains(code, "--") {
			continue
		}
		for _, m := range reOption.FindAllStringSubmatch(code, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				v.names = append(v.names, m[1])
			}
		}
	}
	return v
}
