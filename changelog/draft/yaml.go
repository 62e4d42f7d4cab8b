package draft

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// loadYAML reads the YAML file at p of f (nil when it is absent or does
// not load).
func loadYAML(f fs.FS, p string) *pyyaml.Value {
	data, ok, err := revfs.ReadFile(f, p)
	if err != nil || !ok {
		return nil
	}
	v, err := pyyaml.Load(data, pyyaml.Options{})
	if err != nil {
		return nil
	}
	return v
}

// yamlBullets describes a changed srt-slurm recipe file: its images,
// the variables of its environment maps, and (briefly) its other fields.
// launched leaves out all but its images (the launch diff said its
// servers' options, variables and settings); named says the file with
// each variable's change (a recipe of several).
func yamlBullets(ch *recipe.Change, p string, launched, named bool) []string {
	nd, ok, err := revfs.ReadFile(ch.Head.Files, p)
	if err != nil || !ok {
		return nil
	}
	od, ok, err := revfs.ReadFile(ch.Base.Files, p)
	if err != nil || !ok {
		od = nil
	}
	d, err := config.DiffYAML(od, nd)
	if err != nil && od != nil {
		od = nil // a base that does not parse: as if absent
		d, err = config.DiffYAML(nil, nd)
	}
	if err != nil {
		return nil
	}
	if od == nil {
		return []string{"Add " + p}
	}
	var out []string
	var other []config.Change
	for _, c := range d.Changes {
		segs := strings.Split(c.Path, ".")
		leaf := segs[len(segs)-1]
		if launched && leaf != "container" && leaf != "image" {
			// the servers' options and variables, and the file's other
			// settings (the described launch's "settings"): the launch's
			// diff says them
			continue
		}
		parent := ""
		if len(segs) > 1 {
			parent = strings.ToLower(segs[len(segs)-2])
		}
		switch {
		case leaf == "container" || leaf == "image":
			out = append(out, fmt.Sprintf("Update image from %s to %s", c.Old, c.New))
		case len(segs) == 4 && segs[0] == "backend" && strings.HasSuffix(segs[1], "_config") && (c.OldPath == "" || c.OldPath == c.Path):
			// a server option of a role ("backend.vllm_config.aggregated.
			// max-num-seqs"): said as the launch says options
			out = append(out, roleOptionBullet(segs[2], "--"+leaf, c, " in "+path.Base(p)))
		case strings.Contains(parent, "env") && claims.IsEnvName(leaf):
			file := ""
			if named {
				file = " in " + path.Base(p)
			}
			switch c.Kind {
			case config.Added:
				out = append(out, fmt.Sprintf("Set %s=%s%s", leaf, scalarText(c.New), file))
			case config.Removed:
				out = append(out, "Remove "+leaf+file)
			default:
				out = append(out, fmt.Sprintf("Change %s from %s to %s%s", leaf, scalarText(c.Old), scalarText(c.New), file))
			}
		default:
			other = append(other, c)
		}
	}
	// a few other fields, each said with its verb; many, the file named
	in := " in " + path.Base(p)
	if len(other) > 3 {
		var paths []string
		for _, c := range other {
			paths = append(paths, c.Path)
		}
		return append(out, fmt.Sprintf("Update %s (%s)", p, claims.ListText(paths, 3)))
	}
	for _, c := range other {
		switch {
		case c.Kind == config.Removed:
			out = append(out, "Remove "+c.Path+in)
		case c.Kind == config.Added && literalValue(c.New) && !strings.ContainsAny(c.New, "\n{[") && c.New != "":
			out = append(out, fmt.Sprintf("Set %s: %s%s", c.Path, c.New, in))
		case c.Kind == config.Added:
			out = append(out, "Add "+c.Path+in)
		case literalValue(c.Old) && literalValue(c.New) && !strings.ContainsAny(c.Old+c.New, "\n{[") && c.Old != "" && c.New != "":
			out = append(out, fmt.Sprintf("Change %s from %s to %s%s", c.Path, c.Old, c.New, in))
		default:
			out = append(out, "Change "+c.Path+in)
		}
	}
	return out
}

// modelTableBullets describe what a change did to a multi-node recipe's
// model in the per-model tables of server settings its harness reads
// (InferenceX's AMD models_vllm.yaml: a top-level key per model, e.g.
// Kimi-K2.5-MXFP4, holding prefill and decode flag strings and an env
// string; models.yaml: an entry per run type, DeepSeek-V4-Pro-AgentX and
// -DI, with nested settings), for each such YAML file under benchmarks/
// the change touched: the options each flag string gained, lost or
// changed, the variables of the env string, and other settings by value.
func modelTableBullets(ch *recipe.Change, model string) []string {
	if model == "" {
		return nil
	}
	names := []string{path.Base(model), strings.ReplaceAll(model, "/", "-")}
	// the model's entries: its own, and its variants by run type
	// (models.yaml's DeepSeek-V4-Pro-AgentX and -DI, which
	// server_sglang.sh picks)
	entries := func(f fs.FS, p string) map[string]*pyyaml.Value {
		v := loadYAML(f, p)
		out := map[string]*pyyaml.Value{}
		if v == nil || v.Kind != pyyaml.Map {
			return out
		}
		for _, pr := range v.Pairs {
			for _, n := range names {
				if (pr.Key.Str == n || strings.HasPrefix(pr.Key.Str, n+"-")) && pr.Value.Kind == pyyaml.Map {
					out[pr.Key.Str] = pr.Value
				}
			}
		}
		return out
	}
	var out []string
	for _, p := range ch.Changed {
		if !strings.HasPrefix(p, "benchmarks/") || !isYAML(p) {
			continue
		}
		heads, bases := entries(ch.Head.Files, p), entries(ch.Base.Files, p)
		for _, name := range slices.Sorted(maps.Keys(heads)) {
			if oe := bases[name]; oe != nil {
				out = append(out, tableEntryBullets(heads[name], oe, fmt.Sprintf("%s in %s", name, path.Base(p)), "")...)
			}
		}
	}
	return mergeTableBullets(out)
}

// tableEntryBullets are the changes of one model entry of a table (ne
// against oe), its nested settings by their path ("prefill
// mem_fraction_static"): flag strings by option, env strings by
// variable, other values by value.
func tableEntryBullets(ne, oe *pyyaml.Value, where, prefix string) []string {
	var out []string
	for _, pr := range ne.Pairs {
		ov, _ := oe.Get(pr.Key.Str)
		if ov == nil {
			continue
		}
		if pr.Value.Kind == pyyaml.Map && ov.Kind == pyyaml.Map {
			out = append(out, tableEntryBullets(pr.Value, ov, where, prefix+pr.Key.Str+" ")...)
			continue
		}
		if pr.Value.Kind != pyyaml.Str || ov.Kind != pyyaml.Str {
			if scalar(pr.Value) && scalar(ov) && !pyyaml.Equal(pr.Value, ov) {
				out = append(out, fmt.Sprintf("Change %s%s from %s to %s (in %s)", prefix, pr.Key.Str, valueText(ov), valueText(pr.Value), where))
			}
			continue
		}
		if ov.Str == pr.Value.Str {
			continue
		}
		leaf := prefix + pr.Key.Str
		if strings.Contains(strings.ToLower(leaf), "env") {
			for _, b := range envStringBullets(ov.Str, pr.Value.Str) {
				out = append(out, b+" (in "+where+")")
			}
			continue
		}
		nf, nok := dryrun.FlagString(pr.Value.Str)
		of, ook := dryrun.FlagString(ov.Str)
		if !nok || !ook || !strings.Contains(pr.Value.Str+ov.Str, "--") {
			out = append(out, fmt.Sprintf("Update %s of %s", leaf, where))
			continue
		}
		out = append(out, flagStringBullets(of, nf, fmt.Sprintf("%s of %s", leaf, where))...)
	}
	return out
}

// scalar says whether a value is a number, a boolean or a string.
func scalar(v *pyyaml.Value) bool {
	switch v.Kind {
	case pyyaml.Int, pyyaml.Float, pyyaml.Bool, pyyaml.Str:
		return true
	}
	return false
}

// valueText is a scalar as the table writes it (0.85, true, text).
func valueText(v *pyyaml.Value) string {
	switch v.Kind {
	case pyyaml.Str:
		return v.Str
	case pyyaml.Bool:
		return strconv.FormatBool(v.Bool)
	}
	return v.Repr()
}

// mergeTableBullets joins a model table's bullets that say one change
// twice: the same options added to prefill_flags and decode_flags ("Add
// --a to prefill_flags and decode_flags of M in f.yaml"), and variables
// set or removed in one entry ("Set A=1 and B=2 (in M in f.yaml)").
func mergeTableBullets(bs []string) []string {
	var out []string
	for i, b := range bs {
		if b == "" {
			continue
		}
		if strings.Contains(b, "prefill_flags of ") {
			twin := strings.Replace(b, "prefill_flags of ", "decode_flags of ", 1)
			if j := slices.Index(bs[i+1:], twin); j >= 0 {
				bs[i+1+j] = ""
				b = strings.Replace(b, "prefill_flags of ", "prefill_flags and decode_flags of ", 1)
			}
		}
		verb, _, _ := strings.Cut(b, " ")
		k := strings.LastIndex(b, " (in ")
		if (verb == "Set" || verb == "Remove") && k > 0 && strings.HasSuffix(b, ")") {
			suffix := b[k:]
			items := []string{strings.TrimPrefix(b[:k], verb+" ")}
			for j := i + 1; j < len(bs); j++ {
				if o := bs[j]; strings.HasPrefix(o, verb+" ") && strings.HasSuffix(o, suffix) && strings.LastIndex(o, " (in ") == len(o)-len(suffix) {
					items = append(items, strings.TrimSuffix(strings.TrimPrefix(o, verb+" "), suffix))
					bs[j] = ""
				}
			}
			b = verb + " " + joinAnd(items) + suffix
		}
		out = append(out, b)
	}
	return out
}

// yamlLeaves are the names of the settings each changed YAML file of
// files changes (the last part of each changed path), by file.
func yamlLeaves(ch *recipe.Change, files []string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, p := range files {
		if !isYAML(p) {
			continue
		}
		nd, ok, err := revfs.ReadFile(ch.Head.Files, p)
		if err != nil || !ok {
			continue
		}
		od, ok, err := revfs.ReadFile(ch.Base.Files, p)
		if err != nil || !ok {
			continue
		}
		d, err := config.DiffYAML(od, nd)
		if err != nil {
			continue
		}
		out[p] = map[string]bool{}
		for _, c := range d.Changes {
			out[p][c.Path[strings.LastIndex(c.Path, ".")+1:]] = true
		}
	}
	return out
}

// roleOptionBullet says the change c of a role's server option in an
// srt-slurm recipe file: "Change aggregated --max-num-seqs from 32 to
// 16 in agg.yaml", "Remove decode --enable-cumem-allocator in agg.yaml".
// A switch (true) is the option alone.
func roleOptionBullet(role, opt string, c config.Change, in string) string {
	name := role + " " + opt
	val := func(v string) string {
		if v == "true" || v == "" || v == "null" {
			return ""
		}
		if literalValue(v) && !strings.ContainsAny(v, "\n{[") {
			return " " + v
		}
		return ""
	}
	switch c.Kind {
	case config.Added:
		return "Add " + name + val(c.New) + in
	case config.Removed:
		return "Remove " + name + in
	}
	o, n := val(c.Old), val(c.New)
	switch {
	case o != "" && n != "":
		return fmt.Sprintf("Change %s from %s to %s%s", name, o[1:], n[1:], in)
	default:
		if j, ok := jsonDetail(scalarText(c.Old), scalarText(c.New)); ok {
			return fmt.Sprintf("Change %s (%s)%s", name, j, in)
		}
	}
	return "Change " + name + in
}

// scalarText is the text of a scalar rendered in YAML flow style
// (quotes taken off).
func scalarText(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	return v
}
