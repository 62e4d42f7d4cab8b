package recipe

import (
	"bytes"
	"io/fs"
	"path"
	"regexp"
	"strconv"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/recipe/revfs"
)

// sweepGenerator is what a point's environment takes from the
// repository's own sweep generator at the revision
// (generate_sweep_configs.py): the margin its max-model-len adds to a
// point's isl + osl (200 until #1100, April 2026; 256 since), and the
// short names of sequence lengths its exp-name uses ("1k8k" until March
// 2026). A revision without a generator, or one that says neither in a
// form read here, gets today's values.
type sweepGenerator struct {
	modelLenPad int64
	seqNames    map[[2]int64]string
	// agenticDuration is an agentic point's duration in seconds: 1800,
	// or the scenario's own duration:, until #2005; 3600 since
	// (DEFAULT_AGENTIC_DURATION_SECONDS). durationField: the scenario's
	// duration: is read.
	agenticDuration int64
	durationField   bool
	// durationElsewhere: the generator names its default without
	// defining it (validation.py beside it does; read for an agentic
	// point only)
	durationElsewhere bool
	// agenticBatch is how many concurrencies of a multi-node agentic row
	// share one allocation (MAX_MULTINODE_AGENTIC_CONCURRENCIES_PER_ALLOCATION:
	// 4 from #1970, 1 since #2309)
	agenticBatch int
	dir          string // the generator's directory
}

// generatorPaths are where the generator has lived, newest first.
var generatorPaths = []string{"utils/matrix_logic/generate_sweep_configs.py", "utils/matrix-logic/generate_sweep_configs.py"}

var (
	// Fields.MAX_MODEL_LEN.value: isl + osl + 256 (FIELD_MAX_MODEL_LEN in 2025)
	rePad = regexp.MustCompile(`MAX_MODEL_LEN(?:\.value)?\s*:\s*isl\s*\+\s*osl\s*\+\s*(\d+)`)
	// seq_len_stoi = { "1k1k": (1024, 1024), ... }
	reStoi     = regexp.MustCompile(`(?s)seq_len_stoi\s*=\s*\{(.*?)\}`)
	reStoiItem = regexp.MustCompile(`["'](\w+)["']\s*:\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)`)
	// duration = agentic_config.get(Fields.DURATION.value, 1800)
	reDurationGet = regexp.MustCompile(`agentic_config\.get\(\s*Fields\.DURATION\.value\s*,\s*(\d+)\s*\)`)
	// DEFAULT_AGENTIC_DURATION_SECONDS = 3600 (validation.py)
	reDurationDefault = regexp.MustCompile(`DEFAULT_AGENTIC_DURATION_SECONDS\s*=\s*(\d+)`)
	// MAX_MULTINODE_AGENTIC_CONCURRENCIES_PER_ALLOCATION = 1
	reAgenticBatch = regexp.MustCompile(`(?m)^MAX_MULTINODE_AGENTIC_CONCURRENCIES_PER_ALLOCATION\s*=\s*(\d+)`)
)

// todaysGenerator is the generator perflog was written against.
var todaysGenerator = sweepGenerator{modelLenPad: 256, seqNames: map[[2]int64]string{{1024, 1024}: "1k1k", {8192, 1024}: "8k1k"},
	agenticDuration: 3600, agenticBatch: 1}

// parseGenerator reads what it can of a generator's source (and of the
// validation module beside it); what it cannot read stays today's.
func parseGenerator(src []byte) sweepGenerator {
	g := todaysGenerator
	small := func(b []byte) (int64, bool) {
		n, err := strconv.ParseInt(string(b), 10, 64)
		return n, err == nil && n >= 0 && n < 1<<31
	}
	if m := reDurationGet.FindSubmatch(src); m != nil {
		if n, ok := small(m[1]); ok {
			g.agenticDuration, g.durationField = n, true
		}
	} else if m := reDurationDefault.FindSubmatch(src); m != nil {
		if n, ok := small(m[1]); ok {
			g.agenticDuration = n
		}
	} else if bytes.Contains(src, []byte("DEFAULT_AGENTIC_DURATION_SECONDS")) {
		g.durationElsewhere = true
	}
	if m := reAgenticBatch.FindSubmatch(src); m != nil {
		if n, ok := small(m[1]); ok && n > 0 && n < 1<<10 {
			g.agenticBatch = int(n)
		}
	}
	if m := rePad.FindSubmatch(src); m != nil {
		if n, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && n >= 0 && n < 1<<20 {
			g.modelLenPad = n
		}
	}
	if m := reStoi.FindSubmatch(src); m != nil {
		names := map[[2]int64]string{}
		for _, it := range reStoiItem.FindAllSubmatch(m[1], -1) {
			isl, err1 := strconv.ParseInt(string(it[2]), 10, 64)
			osl, err2 := strconv.ParseInt(string(it[3]), 10, 64)
			if err1 == nil && err2 == nil {
				names[[2]int64{isl, osl}] = string(it[1])
			}
		}
		if len(names) > 0 {
			g.seqNames = names
		}
	}
	return g
}

// generator is the revision's sweep generator, read once (and once per
// content in a history walk's SweepCache).
func (r *Rev) generator() *sweepGenerator {
	if r.gen == nil {
		g := todaysGenerator
		for _, p := range generatorPaths {
			var gens *lru.Cache[string, sweepGenerator]
			if r.sweep != nil {
				gens = r.sweep.gens
			}
			if got, ok := readShared(r.Files, gens, p, parseGenerator); ok {
				g = got
				g.dir = path.Dir(p)
				break
			}
		}
		r.gen = &g
	}
	return r.gen
}

// expSeqLen is the generator's name of a sequence length in exp-name:
// its short name, else "isl_osl".
func (g *sweepGenerator) expSeqLen(isl, osl int64) string {
	if n, ok := g.seqNames[[2]int64{isl, osl}]; ok {
		return n
	}
	return strconv.FormatInt(isl, 10) + "_" + strconv.FormatInt(osl, 10)
}

// agenticDuration is an agentic point's duration under the revision's
// generator: the scenario's own when the generator read it, else its
// default.
func (r *Rev) agenticDuration(item *config.Item) int64 {
	g := r.generator()
	if g.durationField && item.Duration.Set {
		return item.Duration.V
	}
	if g.durationElsewhere {
		g.durationElsewhere = false
		if data, ok, err := revfs.ReadFile(r.Files, path.Join(g.dir, "validation.py")); err == nil && ok {
			if m := reDurationDefault.FindSubmatch(data); m != nil {
				if n, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && n >= 0 && n < 1<<31 {
					g.agenticDuration = n
				}
			}
		}
	}
	return g.agenticDuration
}

// readShared is parse(the file at p), read once per content when c is
// set: a git tree says a file's object id without reading it. The read
// is recorded for a history walk's watch either way. ok is false when
// there is no such file.
func readShared[T any](files fs.FS, c *lru.Cache[string, T], p string, parse func([]byte) T) (v T, ok bool) {
	id := ""
	if h, isH := files.(revfs.Hasher); isH && c != nil {
		// what was there, found or not, is recorded as a read would be
		if rec, isRec := files.(interface{ Note(string, bool) }); isRec {
			rec.Note(p, false)
		}
		if id = h.PathID(p, false); id == "" {
			return v, false
		}
		if v, hit := c.Get(id); hit {
			return v, true
		}
	}
	data, ok, err := revfs.ReadFile(files, p)
	if err != nil || !ok {
		return v, false
	}
	v = parse(data)
	if id != "" {
		c.Put(id, v)
	}
	return v, true
}
