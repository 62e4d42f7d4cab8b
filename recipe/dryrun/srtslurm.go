package dryrun

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/recipe/revfs"
	"gopkg.in/yaml.v3"
)

// StatusDescribed is a multi-node point whose srt-slurm recipe file says
// what each worker launches: read, not run.
const StatusDescribed = "described"

// SettingsSuffix names the file of a described launch that holds the
// recipe's settings other than its workers' (resources, benchmark,
// dynamo, ...): a LaunchDiff of kind "file" In a name with it.
const SettingsSuffix = " (settings)"

// srtPrograms are the server command each srt-slurm backend type starts.
var srtPrograms = map[string][]string{
	"sglang": {"python3", "-m", "sglang.launch_server"},
	"vllm":   {"vllm", "serve"},
	"trtllm": {"trtllm-serve"},
}

// Describe reads what an srt-slurm recipe file launches: one server per
// worker role of backend.<type>_config (prefill, decode, ...), its options
// (for sglang and vllm "key: value" is "--key value"; true is a bare
// option, false and null pass nothing) or, for trtllm, its config file;
// its environment (environment, then backend.<role>_environment); the
// frontend and its args as a router. Every other setting of the file
// (resources, benchmark, dynamo, ...) is kept as the first server's
// "recipe" file, so that any change of the file's meaning shows in a
// launch diff. Overrides (zip_override, override_*, base) are not
// expanded: the point is unknown.
func Describe(files fs.FS, path string) *Launch {
	unknown := func(format string, a ...any) *Launch {
		return &Launch{Status: StatusUnknown, Reason: fmt.Sprintf(format, a...), Unknowns: []Unknown{{At: path + ":1", What: fmt.Sprintf(format, a...)}}}
	}
	data, ok, err := revfs.ReadFile(files, path)
	if err != nil || !ok {
		return unknown("the srt-slurm recipe %s cannot be read", path)
	}
	if len(data) > revfs.MaxScriptSize {
		return unknown("the srt-slurm recipe %s is over %d MiB", path, revfs.MaxScriptSize>>20)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return unknown("the srt-slurm recipe %s does not parse: %v", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return unknown("the srt-slurm recipe %s is not a mapping", path)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i].Value; k == "base" || strings.Contains(k, "override") {
			return unknown("the srt-slurm recipe %s has %s: variants perflog does not expand", path, k)
		}
	}
	backend := get(root, "backend")
	typ := scalar(get(backend, "type"))
	if typ == "" { // older recipes name it only by their <type>_config
		for t := range srtPrograms {
			if get(backend, t+"_config") != nil {
				typ = t
			}
		}
	}
	prog, ok := srtPrograms[typ]
	if !ok {
		return unknown("the srt-slurm recipe %s has backend type %q, which perflog does not describe", path, typ)
	}
	roles := get(backend, typ+"_config")
	if roles == nil || roles.Kind != yaml.MappingNode || len(roles.Content) == 0 {
		return unknown("the srt-slurm recipe %s has no backend.%s_config", path, typ)
	}
	common := envOf(get(root, "environment"))
	l := &Launch{Status: StatusDescribed}
	for i := 0; i+1 < len(roles.Content); i += 2 {
		role, cfg := roles.Content[i].Value, roles.Content[i+1]
		c := Command{Role: role, At: fmt.Sprintf("%s:%d", path, roles.Content[i].Line), Env: map[string]string{}}
		c.Argv = append(c.Argv, prog...)
		for k, v := range common {
			c.Env[k] = v
		}
		for k, v := range envOf(get(backend, role+"_environment")) {
			c.Env[k] = v
		}
		if typ == "trtllm" {
			c.Files = map[string]string{path + " (" + role + ")": lines(flattenAs("", cfg))}
		} else {
			c.Argv = append(c.Argv, optionsOf(cfg)...)
			c.Flags, c.Stray = ParseArgv(c.Argv, len(prog))
		}
		l.Servers = append(l.Servers, c)
	}
	if fe := get(root, "frontend"); fe != nil {
		r := Command{Role: "frontend", At: fmt.Sprintf("%s:%d", path, fe.Line), Env: envOf(get(fe, "env"))}
		r.Argv = append(r.Argv, "frontend", scalar(get(fe, "type")))
		r.Argv = append(r.Argv, optionsOf(get(fe, "args"))...)
		r.Flags, r.Stray = ParseArgv(r.Argv, 2)
		l.Routers = append(l.Routers, r)
	}
	// the rest of the file, as one sorted list of settings
	var rest []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i].Value, root.Content[i+1]
		switch k {
		case "environment":
			continue
		case "frontend":
			v = without(v, "args", "env")
		case "backend":
			var drop []string
			for j := 0; j+1 < len(v.Content); j += 2 {
				if n := v.Content[j].Value; n == typ+"_config" || strings.HasSuffix(n, "_environment") {
					drop = append(drop, n)
				}
			}
			v = without(v, drop...)
		}
		rest = append(rest, flattenAs(k, v)...)
	}
	sort.Strings(rest)
	if l.Servers[0].Files == nil {
		l.Servers[0].Files = map[string]string{}
	}
	l.Servers[0].Files[path+SettingsSuffix] = lines(rest)
	return l
}

// get is a mapping's value for key (nil when absent or not a mapping).
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// without is a copy of a mapping without some keys.
func without(m *yaml.Node, keys ...string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return m
	}
	c := *m
	c.Content = nil
	for i := 0; i+1 < len(m.Content); i += 2 {
		drop := false
		for _, k := range keys {
			drop = drop || m.Content[i].Value == k
		}
		if !drop {
			c.Content = append(c.Content, m.Content[i], m.Content[i+1])
		}
	}
	return &c
}

// envOf reads an environment mapping (scalars as written).
func envOf(m *yaml.Node) map[string]string {
	out := map[string]string{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = valueText(m.Content[i+1])
	}
	return out
}

// optionsOf renders a mapping of options as a command line: "--key
// value", "--key" for true, nothing for false or null.
func optionsOf(m *yaml.Node) []string {
	var out []string
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		flag := "--" + k
		if v.Kind == yaml.ScalarNode {
			switch {
			case v.Tag == "!!null":
				continue
			case v.Tag == "!!bool":
				if b, _ := strconv.ParseBool(strings.ToLower(v.Value)); b {
					out = append(out, flag)
				}
				continue
			}
		}
		if v.Kind == yaml.SequenceNode {
			out = append(out, flag)
			for _, it := range v.Content {
				out = append(out, valueText(it))
			}
			continue
		}
		out = append(out, flag, valueText(v))
	}
	return out
}

// valueText is a value as a command line or environment would carry it:
// a scalar as written, a collection as compact JSON.
func valueText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// flattenAs lists a value's settings as sorted "dotted.key: value" lines
// under prefix.
func flattenAs(prefix string, n *yaml.Node) []string {
	var out []string
	var walk func(p string, n *yaml.Node)
	walk = func(p string, n *yaml.Node) {
		switch {
		case n != nil && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if p != "" {
					k = p + "." + k
				}
				walk(k, n.Content[i+1])
			}
		case n == nil:
			out = append(out, p+": ")
		default:
			out = append(out, p+": "+valueText(n))
		}
	}
	walk(prefix, n)
	sort.Strings(out)
	return out
}

func lines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}
