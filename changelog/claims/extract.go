package claims

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Version names how claims are read and judged. It changes with
// every change to either; checks stored by an index under another version
// are redone (TestClaimsVersionPinned fails until it is bumped).
const Version = "30"

// Claim kinds: what a description bullet says that the change can be
// checked against. Part of the JSON contract: add, never rename.
const (
	KindImage      = "image"         // a container image (tag, from → to)
	KindEnv        = "env"           // an environment variable set, enabled, disabled or removed
	KindFlag       = "flag"          // an engine flag passed or removed
	KindConc       = "conc"          // concurrencies (values, a range) of search-space rows
	KindParallel   = "parallel"      // tp / ep / dp-attn of search-space rows
	KindSeqLen     = "seq-len"       // an ISL/OSL pair (1k1k, 8k1k)
	KindSpec       = "spec-decoding" // speculative decoding (MTP, EAGLE) or its absence
	KindKV         = "kv-cache"      // KV offload / cache features (HiCache, LMCache, mooncake, radix cache)
	KindAppendOnly = "append-only"   // append-only: true (only new search-space points)
)

// reConditional matches an option a bullet names as one passed only at
// times: "conditional --x", "optional --x", "--x when set".
var reConditional = regexp.MustCompile(`(?i)\b(?:conditional(?:ly)?|optional(?:ly)?)\s+(?:pass(?:es)?\s+|adds?\s+)?(--?[A-Za-z][\w.-]*)|(--?[A-Za-z][\w.-]*)\s+(?:only\s+)?(?:when|if)\s+(?:set|given|enabled|requested)\b`)

// conditionalOption says whether the bullet names option as passed only
// at times (reConditional).
func conditionalOption(bullet, option string) bool {
	for _, m := range reConditional.FindAllStringSubmatch(bullet, -1) {
		if m[1] == option || m[2] == option {
			return true
		}
	}
	return false
}

// Claim is one checkable statement of a description bullet.
type Claim struct {
	Kind string `json:"kind"`
	// Text is the part of the bullet the claim was read from.
	Text string `json:"text"`
	// Negated claims say something is removed, dropped or disabled.
	Negated bool `json:"negated,omitempty"`
	// Name is the variable, flag, image repository or feature named.
	Name string `json:"name,omitempty"`
	// Value is the value claimed (env value, flag value, image tag).
	Value string `json:"value,omitempty"`
	// From is the old value of a "from A to B" claim.
	From string `json:"from,omitempty"`
	// Conc lists claimed concurrencies; Range is a claimed [low, high];
	// Max is the highest concurrency of "sweep up to N". A "from 4-64 to
	// 4-256" claim has Range [4, 256] and From "4-64".
	Conc  []int64 `json:"conc,omitempty"`
	Range []int64 `json:"range,omitempty"`
	Max   int64   `json:"max,omitempty"`
	// When restricts a flag or variable claim to the points that meet a
	// condition ("for conc >= 128", "when ISL=8192, OSL=1024 and
	// CONC>128"): any of its groups, each a conjunction.
	When [][]Cond `json:"when,omitempty"`
	// Row qualifies parallel claims and Rows conc claims: the rows they
	// are about (any of Rows).
	Row  *RowQual  `json:"row,omitempty"`
	Rows []RowQual `json:"rows,omitempty"`
	// Variants, for "conc 48 across TP8 +/- DPA +/- HiCache", are the
	// rows each of which must run the concurrency (TP8 with and without
	// DP attention, with and without KV offloading).
	Variants []RowQual `json:"variants,omitempty"`
	// Strong claims assert (an assignment, a verb governing the name);
	// a bare mention is weak and is never called contradicted.
	Strong bool `json:"-"`
	// stated: the bullet states the value in a form that asserts it
	// whatever governs it ("from A to B", "A -> B", a bullet that opens
	// with "--x B").
	stated bool
	// absent: a negated claim that says what the recipes run without ("X
	// is omitted", "no --x", "without X"), of the listed recipes however
	// new, not a change that may be of the recipe they were copied from
	absent bool
	// listed: an option and its value that are one item of a list of
	// options ("…: --load-format fastsafetensors, --moe-backend auto,
	// --enable-prefix-caching"): its word is the value, though a plain
	// word after an option may be prose.
	listed bool
	// whole: a removal ("Remove --x") whose bullet names no scope (no
	// condition, rows, arm, mode or "only"): it speaks of every point of
	// the listed recipes, so points that still launch the name as before
	// contradict it though the change removed it from others.
	whole bool
	// every: a conc range or cap that is its bullet's only one, so it
	// speaks of every row the change touched (that its qualifiers name).
	every bool
	// mention: a flag written as an option (--x, --x V) that no verb
	// governs ("serve flags follow X: --block-size 128, --enforce-eager"):
	// weak, but a reviewer reads it as what the recipe passes, so a
	// launch that passes another literal value, or no launch and no file
	// of either side that has the flag at all, contradicts it.
	mention bool
	// firm (set by the check): a contradiction of a mention that stands
	// though the claim is weak.
	firm bool
	// prose: a name written without dashes that is no option perflog
	// knows ("num-draft-tokens 4→6"); the checker reads it as the option
	// the launches pass whose name ends so, or leaves it unverified.
	prose bool
	// feature: a server feature named in English ("EPLB", "CUDA
	// graphs"), with the options that switch it; Name is then the one
	// the claim is about (see switchTo).
	feature *switchForms
	// others are the entry's other concurrency claims (set by Check): a
	// touched row one of them describes is theirs, not this claim's.
	others []Claim
	// Bullet is the 0-based index of the bullet in the description.
	Bullet int `json:"bullet"`
}

// Cond is one comparison of a condition: Var (conc, isl, osl, tp, ep)
// Op (<, <=, >, >=, =) Value.
type Cond struct {
	Var   string `json:"var"`
	Op    string `json:"op"`
	Value int64  `json:"value"`
}

// Holds reports whether v meets the comparison.
func (c Cond) Holds(v int64) bool {
	switch c.Op {
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value
	case ">":
		return v > c.Value
	case ">=":
		return v >= c.Value
	}
	return v == c.Value
}

func (c Cond) String() string {
	if c.Var == "dpa" {
		if c.Value == 1 {
			return "dp-attn = true"
		}
		return "dp-attn = false"
	}
	return fmt.Sprintf("%s %s %d", c.Var, c.Op, c.Value)
}

// condText renders a condition the way a bullet would.
func condText(when [][]Cond) string {
	var alts []string
	for _, g := range when {
		var parts []string
		for _, c := range g {
			parts = append(parts, c.String())
		}
		alts = append(alts, strings.Join(parts, " and "))
	}
	return strings.Join(alts, ", or ")
}

// RowQual restricts a claim to search-space rows.
type RowQual struct {
	TP  []int64 `json:"tp,omitempty"`
	EP  []int64 `json:"ep,omitempty"`
	DPA *bool   `json:"dp_attn,omitempty"`
	// Seq lists ISL/OSL pairs ("8192/1024").
	Seq []string `json:"seq,omitempty"`
	// KV is KV-cache offloading on or off (a "+/- HiCache" variant).
	KV *bool `json:"kv_offloading,omitempty"`
	// Workers are a multi-node layout's prefill and decode worker counts
	// ("1P2D", "2P-TP4/1D-TP4").
	Workers []int64 `json:"workers,omitempty"`
}

// kvNames spells KV-cache features one way.
var kvNames = strings.NewReplacer("hierarchical cache", "hicache", "hierarchical-cache", "hicache", "radix-cache", "radix cache")

func (q *RowQual) empty() bool {
	return q == nil || (len(q.TP) == 0 && len(q.EP) == 0 && q.DPA == nil && len(q.Seq) == 0 && q.KV == nil && len(q.Workers) == 0)
}

var (
	reURL = regexp.MustCompile(`https?://\S+`)
	// an image reference: repository with a '/', a tag and/or a digest
	reImage = regexp.MustCompile(`(?:[a-z0-9][a-z0-9.-]*(?::[0-9]+)?[/#])+[a-z0-9][a-z0-9._-]*(?::[A-Za-z0-9_][A-Za-z0-9._+-]*)?(?:@sha256:[0-9a-f]{7,64})?`)
	// a tag after "to" or "from" in an image clause
	reTag     = regexp.MustCompile(`(?i)\b(from|to)\s+` + "`?" + `(v?[0-9][A-Za-z0-9._+-]*|nightly[A-Za-z0-9._+-]*|latest\s*$|rc[0-9][A-Za-z0-9._+-]*)`)
	reEnvSet  = regexp.MustCompile(`\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=("[^"]*"|'[^']*'|[^\s,;)\]` + "`" + `]+)`)
	reEnvPair = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+=[^\s,;/]+(/)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+=`)
	reEnvName = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	reFlag    = regexp.MustCompile(`(?:^|[\s(\[,'"` + "`" + `/])(--[a-z0-9][a-z0-9_.-]*[a-z0-9])(?:[= ]+("[^"]*"|'[^']*'|[A-Za-z0-9_.:/+-]+))?`)
	reBare    = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:-[a-z0-9]+){1,6}\b`)
	// concurrency: "conc 4-64", "conc=48", "concurrency 1, 2 and 4", "conc-list [1, 4]", "c1-c32", "C1/C5"
	reConc = regexp.MustCompile(`(?i)\b(?:conc(?:urrenc(?:y|ies))?(?:-list)?|concs)\s*(?:=|:|of|at|to)?\s*(?:\[\s*)?((?:\d+(?:,\d+)*\b)(?:\s*(?:-|–|—|\.\.\.?|to|/|,\s*(?:and\s+)?|\s+and\s+)\s*\d+(?:,\d+)*\b)*)\]?|\b[cC](\d+)((?:\s*(?:-|–|/)\s*[cC]?\d+)*)\b`)
	// a multi-node layout: "1P2D", "2P/1D", "1P-TP4/2D-TP4", "1p1d"
	reWorkers   = regexp.MustCompile(`(?i)\b(\d{1,2})p(?:-(tp|dep|tep)(\d+))?\s*[/+]?\s*(\d{1,2})d(?:-(tp|dep|tep)(\d+))?\b`)
	rePar       = regexp.MustCompile(`(?i)\b(?:(tp|ep|dp|dep|tep)\s*(?:=|:)?\s*(\d+)|(dpa|dp-attn(?:\s*[=:]?\s*(?:true|false))?|dp-o(?:n|ff)|dp[- ]attention|data[- ]parallel attention|tp-only|non-dp-attention|non-dpa))\b`)
	reSeq       = regexp.MustCompile(`(?i)\b(?:isl\s*=?\s*(1k|8k|1024|8192)\s*/\s*osl\s*=?\s*(1k|8k|1024|8192)|(1|8)k\s*/?\s*(1|8)k|(1024|8192)\s*/\s*(1024|8192)|isl\s*=?\s*(1024|8192|1k|8k))\b`)
	reSpec      = regexp.MustCompile(`(?i)\b(non-mtp|no-mtp|no mtp|without mtp|stp|mtp|eagle3?|speculative[- ]decoding|draft tokens|nextn)\b`)
	reKV        = regexp.MustCompile(`(?i)\b(hicache|hierarchical[- ]cache|lmcache|mooncake|simplecpu|radix[- ]cache)\b`)
	imageClause = regexp.MustCompile(`(?i)\b(image|container|docker|tag)\b`)
	rePath      = regexp.MustCompile(`\S*/\S*/\S*|\S+\.(?:sh|yaml|yml|py|json)\b`)
	reWord      = regexp.MustCompile(`[A-Za-z0-9_][A-Za-z0-9_'-]*`)
	// "conc up to 1024", "concurrency sweep up to 512"; "maximum
	// concurrency to 256", "max conc 64"
	reConcMax = regexp.MustCompile(`(?i)\bconc(?:urrenc(?:y|ies))?(?:[ -](?:sweep|range|list))?\s+up\s+to\s*(\d[\d,]*)\b|\bmax(?:imum)?\s+conc(?:urrenc(?:y|ies))?\s*(?:=|:|of|to|at)?\s*(\d[\d,]*)\b`)
	// "concurrency from 4-64 to 4-256", "conc range from 4-64 to 4-128"
	reConcFrom = regexp.MustCompile(`(?i)\bconc(?:urrenc(?:y|ies))?(?:[ -](?:sweep|range|list))?\s+from\s+(\d+)\s*[-–]\s*(\d+)\s+to\s+(\d+)\s*[-–]\s*(\d+)\b`)
	// "conc from [1, 4, 8] to [1, 2, 4, 8]", "conc from [48, 64, 96] to
	// 48", "conc from 4-64 to [4, 8, 16]": a list on one side at least
	reConcFromList = regexp.MustCompile(`(?i)\bconc(?:urrenc(?:y|ies))?(?:[ -](?:sweep|range|list))?\s+from\s+(\[[\d,\s]+\]|\d+\s*[-–]\s*\d+|\d+)\s+to\s+(\[[\d,\s]+\]|\d+\s*[-–]\s*\d+|\d+)`)
	// a comparison of a condition: "conc >= 128", "CONC>4", "ISL=8192"
	reCmp = regexp.MustCompile(`(?i)\b(conc(?:urrency)?|isl|osl|tp|ep|dp[_-]attention|dp[_-]attn)\s*(<=|>=|≤|≥|<|>|==|=)\s*(\d+|true|false)(k)?\b`)
	// what may join the comparisons of one condition
	reOr      = regexp.MustCompile(`(?i)\bor\b|\|\|`)
	reCmpJoin = regexp.MustCompile(`(?i)^(?:[\s,;&|()]|\band\b|\bor\b)*$`)
	// words that make equalities a condition ("when ISL=8192", "above
	// CONC=5")
	reCondWord  = regexp.MustCompile(`(?i)\b(when|if|where|whenever|unless|above|below|over|under|beyond)\s*\(?\s*$`)
	reIsRange   = regexp.MustCompile(`\d\s*(?:-|–|—|\.\.\.?|\bto\b)\s*[cC]?\d`)
	reNumber    = regexp.MustCompile(`\d[\d,]*\d|\d`)
	reThousands = regexp.MustCompile(`^\d{1,3}(,\d{3})+$`)
	// verbs that are nouns as often ("the TP8 sweep"): verbs only when
	// they open the clause
	reLeadVerb = regexp.MustCompile(`(?i)^(sweep(?:s)?|cover(?:s)?|run(?:s)?|turn(?:s)?)$`)
	// measurement prose: numbers in it are results, not the search space
	reNarrative = regexp.MustCompile(`(?i)(%|tok/s|tokens?/s|\btput\b|throughput|\bttft\b|\btpot\b|latency|gsm8k|accuracy|\boom\b|\bhang|regress|\brun \d{6,}|showed|\bms\b|\bx\b|speedup|faster|slower|improv|beats|outperform|dominated|overflows|thrash|\bpeak\b|fail|crash|\berror|silently|reported|because|\bbug\b|\bissue\b|assert|measured|uplift|verified|validated|completed|tested|cannot|can't|never|did not|didn't|root[- ]caus|ruled out|garbled|gibberish)`)
	// reImageOpens is a clause's opening words that make the image right
	// after them what the recipe runs, whatever story follows ("Use the
	// immutable IMAGE because …", "Image IMAGE (pushed …): …")
	reImageOpens = regexp.MustCompile(`(?i)^\W*(?:use|image:?|switch(?:es)? to|bump(?:s)?(?: the image)? to)\s+(?:the\s+(?:[\w-]+\s+)?)?$`)
	// reValueNoun follows an upper-case name that is a value of some
	// setting (a backend, a kernel), not a variable
	reValueNoun = regexp.MustCompile(`^[ -](?:fallback|backends?|kernels?|path|method|format|scheme|layout|dtype|quantization|mode)\b`)
	// reAside opens a remark after a comma
	reAside = regexp.MustCompile(`^, (?:which|because|since|as) `)
	// reRunKind names a kind of run ("throughput runs", "the latency
	// arm"), not a measurement
	reRunKind = regexp.MustCompile(`(?i)\b(?:max-)?(?:throughput|latency)[ -](?:runs?|arms?|points?|configs?|scenarios?|sweeps?|modes?|jobs?|recipes?)\b`)
	// counterfactual and old-state markers: what follows is not the head
	reCounter = regexp.MustCompile(`(?i)\b(rather than|instead of|previously|formerly|was|were|used to|will|would|could|should|vs\.?|versus|compared (?:to|with)|than|replacing|in place of|originally|old|no longer|until|once|if|when|unless|pending|future|follow-?up|todo|later|unlike|ahead of|attempt\w*|re-attempt\w*|tried|trying|avoid\w*|deliberately|upstream|sibling|default(?:s|ed)? to)\b`)
	// determiner: a negation that stands before a noun rather than a
	// verb; it reaches along a list of names, not across other settings.
	determiner = map[string]bool{"no": true, "not": true, "without": true, "never": true}
	reNeg      = regexp.MustCompile(`(?i)^(remove[sd]?|removing|drop(?:s|ped|ping)?|delete[sd]?|deleting|disable[sd]?|disabling|unset|strip(?:ped)?|without|no|not|never|omit(?:s|ted)?|exclude[sd]?|excluding|revert(?:s|ed)?|stop|prune[sd]?|skip(?:s|ped)?)$`)
	rePos      = regexp.MustCompile(`(?i)^(add(?:s|ed|ing)?|set(?:s|ting)?|enable[sd]?|enabling|pass(?:es|ed)?|use[sd]?|using|export(?:s|ed)?|keep(?:s)?|kept|bump(?:s|ed)?|update[sd]?|upgrade[sd]?|switch(?:es|ed)?|introduce[sd]?|apply|applie[sd]|include[sd]?|extend(?:s|ed)?|expand(?:s|ed)?|restore[sd]?|re-?enable[sd]?|with|via|pin(?:s|ned)?|move[sd]?|align(?:s|ed)?|raise[sd]?|raising|lower(?:s|ed|ing)?|increase[sd]?|increasing|decrease[sd]?|decreasing|reduce[sd]?|reducing)$`)
)

// stopWords are words after a flag that are not its value.
var stopWords = map[string]bool{"from": true, "to": true, "and": true, "for": true, "on": true, "in": true, "at": true,
	"is": true, "are": true, "the": true, "a": true, "an": true, "of": true, "as": true, "by": true, "so": true,
	"plus": true, "or": true, "but": true, "now": true, "only": true, "flag": true, "flags": true, "instead": true,
	"unconditionally": true, "too": true, "also": true, "which": true, "that": true, "when": true, "if": true,
	"stays": true, "stay": true, "per": true, "remains": true, "remain": true, "kept": true}

// falseName lists all-caps tokens that are not environment variables.
var falseName = map[string]bool{"ISL_OSL": true}

// Extract reads the checkable claims of a description. It prefers
// missing a claim to inventing one: counterfactual wording ("rather than
// 24", "previously"), old values ("from A"), measurement prose and paths
// are skipped. An option written without dashes is read when it is one of
// the engines' common options (knownFlags); ExtractIn reads it against a
// repository's own options as well.
func Extract(description []string) []Claim { return ExtractIn(description, nil) }

// ExtractIn is Extract with the options the repository's scripts pass
// (options reports a name without dashes, "disable-radix-cache"): a
// bullet's "pin max-num-batched-tokens to 8192" names an option when the
// engines or the repository have it.
func ExtractIn(description []string, options func(string) bool) []Claim {
	var out []Claim
	for i, b := range description {
		cs := extractBullet(b, options)
		if reRerun.MatchString(b) {
			for j := range cs {
				cs[j].From = "" // the run it repeats changed from A, not this one
			}
		}
		for j := range cs {
			c := &cs[j]
			if c.Negated && (c.Kind == KindFlag || c.Kind == KindEnv) && len(c.When) == 0 {
				c.whole = !reScoped.MatchString(reParen.ReplaceAllString(b, " "))
			}
		}
		concs := 0
		var pars []Claim
		for _, c := range cs {
			switch c.Kind {
			case KindConc:
				concs++
			case KindParallel:
				pars = append(pars, c)
			}
		}
		if concs == 1 && len(pars) > 0 && !strings.Contains(strings.ToLower(b), "non-") {
			// "add tp2 ep2 entries (conc 2-256)": a range the words around
			// it did not tie to rows is about the rows the bullet names
			for j := range cs {
				if cs[j].Kind != KindConc || len(cs[j].Rows) > 0 || len(cs[j].Variants) > 0 {
					continue
				}
				cs[j].Rows = parRows(b, pars, cs[j])
			}
		}
		if concs > 1 {
			// "1k1k: balanced 1P-TP4/1D-TP4 (conc 1-1024) + decode-heavy
			// 1P-TP4/2D-TP4 (conc 256-2048)": each range is about the
			// layout it follows
			at := 0
			for j := range cs {
				if cs[j].Kind != KindConc {
					continue
				}
				k := strings.Index(b[at:], cs[j].Text)
				if k < 0 {
					continue
				}
				pos := at + k
				at = pos + len(cs[j].Text)
				if len(cs[j].Rows) == 0 && len(cs[j].Variants) == 0 {
					if q, ok := layoutBefore(b[:pos], cs); ok {
						cs[j].Rows = []RowQual{q}
					}
				}
			}
		}
		if reNarrative.MatchString(b) || reCounter.MatchString(b) {
			for j := range cs {
				cs[j].mention = false // an option named in a story, or in what was not done
			}
		}
		cs = slices.DeleteFunc(cs, func(c Claim) bool {
			// "conditional --kv_cache_dtype": what a script can pass, not
			// what every point does
			return c.Kind == KindFlag && conditionalOption(b, c.Name)
		})
		label := seqLabel(b)
		for _, c := range cs {
			c.Bullet = i
			// "8k1k: 6-variant sweep — ... conc up to 512": every range of
			// the bullet is about rows of those sequence lengths (which
			// alone pair it with no rows)
			labelOnly := label != "" && c.Kind == KindConc && len(c.Rows) == 0
			if label != "" && c.Kind == KindConc {
				c.Rows = labelled(c.Rows, label)
			}
			// a range paired with rows of its own ("TP4/EP1 c1-c32 and
			// TP4/EP4 c64-c256") speaks of every touched row of them too
			// ("unchanged", "keeps", an offload arm: in its own sentence)
			c.every = c.Kind == KindConc && (c.Max > 0 || len(c.Range) == 2) &&
				((concs == 1 && speaksOfEvery(b, c, pars)) || (concs > 1 && len(c.Rows) > 0 && !labelOnly && !reSame.MatchString(clauseAround(b, c.Text)) && !reOffload.MatchString(clauseAround(b, c.Text))))
			out = append(out, c)
		}
	}
	return out
}

// seqOnly says whether rows are qualified by sequence lengths alone.
func seqOnly(rows []RowQual) bool {
	for _, q := range rows {
		if len(q.TP) > 0 || len(q.EP) > 0 || q.DPA != nil || q.KV != nil || len(q.Workers) > 0 {
			return false
		}
	}
	return len(rows) > 0
}

// namedBefore says whether a bullet names its parallelisms in a few
// words before the range, in one clause ("1P+1D TP8/EP1 CI smoke sweep
// for 1k1k and 8k1k (conc 8-512)"): they are its rows however many.
func namedBefore(bullet string, pars []Claim, c Claim) bool {
	seg, ok := beforeRange(bullet, pars, c)
	return ok && !strings.ContainsAny(seg, ",;:)") && wordsBetween(strings.ReplaceAll(seg, "/", " ")) <= 4
}

// beforeRange is the text from a bullet's first parallelism to its range
// with the parallelisms blanked out; ok is false when the range does not
// follow them.
func beforeRange(bullet string, pars []Claim, c Claim) (seg string, ok bool) {
	i := strings.Index(bullet, pars[0].Text)
	if i < 0 {
		return "", false
	}
	j := strings.Index(bullet[i:], c.Text)
	if j < 0 {
		return "", false
	}
	seg = bullet[i : i+j]
	for _, p := range pars {
		seg = strings.Replace(seg, p.Text, " ", 1)
	}
	return seg, true
}

// asideBefore says whether text stands in a parenthetical that closes
// before after begins.
func asideBefore(bullet, text, after string) bool {
	i := strings.Index(bullet, text)
	k := strings.Index(bullet, after)
	if i < 0 || k < i {
		return false
	}
	open := strings.LastIndex(bullet[:i], "(")
	closed := strings.Index(bullet[i:], ")")
	return open >= 0 && !strings.Contains(bullet[open:i], ")") && closed >= 0 && i+closed < k
}

// labelled is rows with the sequence lengths seq where they name none.
func labelled(rows []RowQual, seq string) []RowQual {
	if len(rows) == 0 {
		return []RowQual{{Seq: []string{seq}}}
	}
	out := slices.Clone(rows)
	for k := range out {
		if len(out[k].Seq) == 0 {
			out[k].Seq = []string{seq}
		}
	}
	return out
}

// reSeqLabel opens a bullet with a sequence-length label ("8k1k: ...").
var reSeqLabel = regexp.MustCompile(`^\W*(\d+k/?\d+k)\s*:`)

// seqLabel is the sequence lengths ("8192/1024") of a bullet's label, ""
// when it opens with none.
func seqLabel(b string) string {
	m := reSeqLabel.FindStringSubmatch(b)
	if m == nil {
		return ""
	}
	if k := reSeq.FindStringSubmatchIndex(m[1]); k != nil && k[0] == 0 && k[1] == len(m[1]) {
		return seqOf(m[1], k)
	}
	return ""
}

// clauseAround is the sentence around text cut at dashes: "1k1k: 4
// variants, behavior unchanged from the previous recipe — 2 low-latency
// (…, conc up to 512)" says "unchanged" of another clause than the
// range's.
func clauseAround(bullet, text string) string {
	sentence := sentenceAround(bullet, text)
	i := strings.Index(sentence, text)
	if i < 0 {
		return sentence
	}
	for _, dash := range []string{" — ", " -- ", " – "} {
		if j := strings.LastIndex(sentence[:i], dash); j >= 0 {
			sentence, i = sentence[j+len(dash):], i-j-len(dash)
		}
		if j := strings.Index(sentence[i:], dash); j >= 0 {
			sentence = sentence[:i+j]
		}
	}
	return sentence
}

// layoutBefore is the multi-node layout a parenthesis opened right after
// it is about ("1P-TP4/2D-TP4 (conc 256-2048"): before is the bullet up
// to the range. The sequence lengths its sentence names before it
// ("8k1k: ...") narrow it too.
func layoutBefore(before string, cs []Claim) (RowQual, bool) {
	open := strings.TrimRight(before, " ")
	if !strings.HasSuffix(open, "(") {
		return RowQual{}, false
	}
	open = strings.TrimRight(strings.TrimSuffix(open, "("), " ")
	var q RowQual
	found := false
	for _, c := range cs {
		if c.Kind == KindParallel && c.Row != nil && len(c.Row.Workers) == 2 && strings.HasSuffix(open, c.Text) {
			q, found = *c.Row, true
		}
	}
	if !found {
		return RowQual{}, false
	}
	sentence := open
	if i := strings.LastIndexAny(sentence, ";"); i >= 0 {
		sentence = sentence[i+1:]
	}
	if i := strings.LastIndex(sentence, ". "); i >= 0 {
		sentence = sentence[i+2:]
	}
	last := -1
	for _, c := range cs {
		if c.Kind == KindSeqLen {
			if i := strings.LastIndex(sentence, c.Text); i > last {
				last, q.Seq = i, []string{c.Value}
			}
		}
	}
	return q, true
}

// reOffload: a bullet that tells rows apart by KV offloading ("resident
// TP8 c1-c5, and Mooncake DRAM offload c6/c8"), which its ranges' row
// qualifiers do not carry: each range is then about some row.
var reOffload = regexp.MustCompile(`(?i)\b(offload\w*|resident|hicache|lmcache|mooncake|simplecpu|dram)\b`)

// parRows are the rows a bullet's parallelisms name, those written
// together ("tp4 ep4", "TP8/EP8") as one row.
func parRows(bullet string, pars []Claim, conc Claim) []RowQual {
	var out []RowQual
	at := 0 // where the last one ended
	for _, p := range pars {
		if !rePlainPar.MatchString(p.Text) && (p.Row == nil || len(p.Row.Workers) == 0) {
			return nil // DEP8, TEP4 name rows as layouts do, which differ by era
		}
	}
	for i, p := range pars {
		if p.Row == nil || p.Negated {
			continue
		}
		j := strings.Index(bullet[at:], p.Text)
		if j < 0 {
			continue
		}
		sep := bullet[at : at+j]
		if i > 0 && len(out) > 0 && strings.Trim(sep, " /+") == "" {
			applyPar(&out[len(out)-1], p)
		} else {
			var g RowQual
			applyPar(&g, p)
			out = append(out, g)
		}
		at += j + len(p.Text)
	}
	// the range right after them ("tp4 ep4 entries (conc 32-256)"), not
	// in another clause ("..., MTP, hicache) over 7 points at conc 32-384")
	k := strings.Index(bullet[at:], conc.Text)
	if k < 0 || strings.ContainsAny(bullet[at:at+k], ",;:)") || wordsBetween(bullet[at:at+k]) > 4 {
		return nil
	}
	return out
}

// wordsBetween counts the words between a bullet's rows and its range,
// leaving out sequence lengths and the words joining them, which qualify
// the same rows ("1P+1D TP8/EP1 CI smoke sweep for 1k1k and 8k1k (conc
// 8-512)": three).
func wordsBetween(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		w = strings.ToLower(strings.Trim(w, "(["))
		if w == "" || w == "and" || w == "for" || w == "at" || reSeqLenWord.MatchString(w) {
			continue
		}
		n++
	}
	return n
}

// reSeqLenWord is a sequence length written as a word (1k1k, 8k/1k).
var reSeqLenWord = regexp.MustCompile(`^\d+k/?\d+k$`)

// rePlainPar: a parallelism written as tp/ep and a number.
var rePlainPar = regexp.MustCompile(`(?i)^(tp|ep)\s*[=:]?\s*\d+$`)

// listedBefore says whether a bullet lists its parallelisms right
// before the range, with nothing but connectors between them ("TP=8,
// EP=8, DP-attn=true, CONC 4-64"; not "add TP2 and TP8 configurations,
// ..., and add TP8 conc=1-2").
func listedBefore(bullet string, pars []Claim, c Claim) bool {
	seg, ok := beforeRange(bullet, pars, c)
	if !ok {
		return false
	}
	for _, w := range strings.FieldsFunc(seg, func(r rune) bool { return !unicode.IsLetter(r) }) {
		switch strings.ToLower(w) {
		case "and", "or", "with", "plus", "over", "across", "at":
			// ("tp=8 and tp=4/ep=1 over conc 4-64", "TP8 at conc 1-24")
		default:
			return false
		}
	}
	return true
}

// reRerun: a bullet of a re-run, which repeats what the original PR
// changed ("Rerun update SGLang image from v0.5.10.post1 to v0.5.11").
var reRerun = regexp.MustCompile(`(?i)^\W*(?:re-?run|re-?trigger|retrigger)\b`)

// reBoth ends a text that puts what follows both ways: "with and without
// EP and dp-attn".
var reBoth = regexp.MustCompile(`(?i)\bwith\s+(?:and|or)\s+without\s+(?:[\w/-]+\s*(?:,|and|or)\s*)*$`)

// rePostGone: an option said to be gone after it, or after the list it
// ends ("--a & --b is no longer available in sglang, so ...").
var rePostGone = regexp.MustCompile(`(?i)^(?:\s*(?:&|and|,)\s*[-\w` + "`" + `'"]+)*[\s` + "`" + `'"]*(?:is|are)\s+no\s+longer\s+(?:available|supported|needed|used|passed|valid|required|accepted|exists?)\b`)

// rePostOff: a feature said to be off after its name ("radix cache
// disabled").
var rePostOff = regexp.MustCompile(`(?i)^[\s` + "`" + `'"]*(?:is\s+|are\s+|stays\s+|remains\s+)?(?:disabled|turned off|switched off|off)\b`)

// rePostNeg: a removal said after the name ("X=1 dropped", "--x
// removed"). A removal scoped to some arms ("dropped on the lmcache arm only") is
// not one of the whole recipe: only one that ends the clause counts.
// reAbsent and reAbsentAfter are the negating words that say what runs
// without a setting, before its name and after it.
var (
	reAbsent      = regexp.MustCompile(`(?i)^(?:without|no|not|never|omit(?:s|ted)?|exclude[sd]?|excluding)$`)
	reAbsentAfter = regexp.MustCompile(`(?i)^[\s` + "`" + `'"]*(?:is\s+|are\s+)?(?:omitted|not\s+passed|absent)\b`)
)

var rePostNeg = regexp.MustCompile(`(?i)^[\s` + "`" + `'"]*(?:is\s+|are\s+|was\s+|were\s+)?(?:dropped|removed|deleted|stripped|omitted|gone)\s*(?:[.;,]|$)`)

// reScoped finds the words by which a bullet narrows what it says to some
// points: a condition, an arm, a mode, rows, a place ("on the lmcache
// arm only", "for MTP", "in the docker script", "TP8", "8k1k").
var reScoped = regexp.MustCompile(`(?i)\b(only|arms?|for|when|if|where|unless|except|some|certain|on|in|from|within|scenarios?|variants?|paths?|branch(?:es)?|cases?|modes?|single[- ]node|multi[- ]node|prefill|decode|mtp|eagle\d*|dpa|dp[- ]attn(?:ention)?|docker|slurm|tp\d+|ep\d+|dep\d+|tep\d+|\d+k\d+k|isl|osl|conc\w*)\b`)

// reParen finds a parenthetical: an aside, not a scope ("(now enabled by
// default in vLLM v0.14.0)").
var reParen = regexp.MustCompile(`\([^()]*\)`)

// reSame: wording that says rows kept what they ran ("conc1-2
// unchanged"), so a range in it speaks of no change.
var reSame = regexp.MustCompile(`(?i)\b(unchanged|untouched|same (?:as before|conc\w*|range|sweep|search[- ]space|rows?)|kept|keeps?|as before|remains?|stays?)\b`)

// speaksOfEvery says whether a bullet's one concurrency range or cap
// speaks of every row the change touched (that its qualifiers name):
// when every parallelism the bullet names qualifies it ("TP=8, EP=1,
// concurrency 4-64"), and nothing says the rows stayed
// as they were. A bullet that names other rows too ("add TP2 and TP8
// configurations, ..., and add TP8 conc=1-2") leaves it a claim about
// some row.
// sentenceAround is the sentence of bullet that holds text's first
// occurrence (the whole bullet when text is not in it).
func sentenceAround(bullet, text string) string {
	i := strings.Index(bullet, text)
	if i < 0 {
		return bullet
	}
	start, end := strings.LastIndex(bullet[:i], ". ")+1, len(bullet)
	if j := strings.Index(bullet[i:], ". "); j >= 0 {
		end = i + j
	}
	return bullet[start:end]
}

func speaksOfEvery(bullet string, c Claim, pars []Claim) bool {
	if reSame.MatchString(bullet) {
		return false
	}
	// (rows named in another sentence, "TP4 would need ~375 GB/GPU", are
	// no rows of this range)
	if strings.Contains(bullet, c.Text) {
		sentence := sentenceAround(bullet, c.Text)
		pars = slices.DeleteFunc(slices.Clone(pars), func(p Claim) bool { return !strings.Contains(sentence, p.Text) })
		bullet = sentence
	}
	// (a parallelism in an aside closed before the range, "expand the TP
	// sweep (included TP=4) for 8k/1k for conc=4 to 64", is what the
	// change added among the rows the range speaks of)
	if seqOnly(c.Rows) {
		pars = slices.DeleteFunc(slices.Clone(pars), func(p Claim) bool { return asideBefore(bullet, p.Text, c.Text) })
	}
	if len(pars) > 2 && !listedBefore(bullet, pars, c) && !namedBefore(bullet, pars, c) {
		return false
	}
	for _, p := range pars {
		if p.Row == nil {
			return false
		}
		in := false
		for _, q := range c.Rows {
			in = in || (len(p.Row.Workers) > 0 && slices.Equal(p.Row.Workers, q.Workers)) ||
				(len(p.Row.TP) > 0 && len(q.TP) > 0 && slices.Equal(p.Row.TP, q.TP)) ||
				(len(p.Row.EP) > 0 && len(q.EP) > 0 && slices.Equal(p.Row.EP, q.EP)) ||
				(p.Row.DPA != nil && q.DPA != nil && *p.Row.DPA == *q.DPA)
		}
		if !in {
			return false
		}
	}
	return true
}

// span is a clause of a bullet with the polarity and the counterfactual
// state in force at each byte.
type clause struct {
	text      string
	narrative bool
	// label is set for a list introduced by "flags:", "env:" and the
	// like: its items are claimed as they stand.
	label bool
	// ctx is the polarity a parenthetical inherits from the words before
	// it ("drop the DEP8 sweep (conc 128/256)"): ctxNone, ctxPos, ctxNeg
	// or ctxCounter.
	ctx int
	// aside: the clause opens with " -- ", " — " or ", which" (a remark
	// on the clause before it); closed: a dash aside closes it.
	aside, closed bool
}

const (
	ctxNone = iota
	ctxPos
	ctxNeg
	ctxCounter
)

// contextOf reads the polarity a parenthetical inherits from its
// sentence: the sentence's first verb ("Remove env vars redundant with the
// defaults (A, B)" removes A and B). "Disable X (FLAG)" names the
// mechanism: FLAG is passed, so disable and enable give ctxPos.
func contextOf(before string) int {
	if i := strings.LastIndexAny(before, ";"); i >= 0 {
		before = before[i+1:]
	}
	if i := strings.LastIndex(before, ". "); i >= 0 {
		before = before[i+2:]
	}
	ws := reWord.FindAllString(before, -1)
	for i, raw := range ws {
		w := strings.ToLower(raw)
		switch {
		case reCounter.MatchString(w):
			return ctxCounter
		case w == "with" || w == "via" || w == "no" || w == "not" || w == "without":
			continue
		case strings.HasPrefix(w, "disabl") || strings.HasPrefix(w, "enabl"):
			return ctxPos
		case reNeg.MatchString(w):
			return ctxNeg
		case rePos.MatchString(w) || (i == 0 && reLeadVerb.MatchString(w)):
			return ctxPos
		}
	}
	if len(ws) > 0 && reLabel.MatchString(strings.ToLower(ws[len(ws)-1])) {
		return ctxPos // "server args (a, b)"
	}
	return ctxNone
}

// hasVerb reports whether a clause has a verb of its own.
func hasVerb(t string) bool {
	for _, w := range reWord.FindAllString(t, -1) {
		w = strings.ToLower(w)
		if w != "with" && w != "via" && (rePos.MatchString(w) || reNeg.MatchString(w) || reCounter.MatchString(w)) {
			return true
		}
	}
	return false
}

// splitClauses splits a bullet at sentence ends, semicolons and colons.
// A parenthetical is a clause of its own, and is blanked out of the text
// around it, so that "drop A (detail) and B" still reads as one clause.
func splitClauses(b string) []clause {
	var out []clause
	outer := []byte(b)
	depth, open := 0, -1
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '(':
			if depth == 0 && i > 0 && b[i-1] != ' ' && b[i-1] != '\t' {
				continue // dirname(MODEL_PATH): part of a word, not a remark
			}
			if depth == 0 {
				open = i
			}
			depth++
		case ')':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				inner := splitClauses(b[open+1 : i])
				ctx := contextOf(string(outer[:open]))
				for k := range inner {
					if inner[k].ctx == ctxNone && !hasVerb(inner[k].text) {
						inner[k].ctx = ctx
					}
				}
				out = append(out, inner...)
				for k := open; k <= i; k++ {
					outer[k] = ' '
				}
			}
		}
	}
	b = string(outer)
	start := 0
	depth = 0
	label := false
	first := len(out) // the clauses of b itself, after its parentheticals'
	aside, ended := false, true
	flush := func(end int) {
		t := strings.TrimSpace(b[start:end])
		if t != "" {
			out = append(out, clause{text: t, label: label, aside: aside && !ended})
		}
		dash := end < len(b) && (strings.HasPrefix(b[end:], " -- ") || strings.HasPrefix(b[end:], " — "))
		if t != "" && dash && aside {
			out[len(out)-1].closed = true
		}
		aside = dash || (end < len(b) && b[end] == ',')
		ended = end == len(b) || b[end] == '.' || b[end] == ';'
		label = end < len(b) && b[end] == ':' && reLabel.MatchString(strings.TrimSpace(b[start:end]))
		start = end + 1
	}
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case ';':
			flush(i)
		case ',':
			// ", which ...", ", because ...": the reason or a remark on
			// what the clause set, not part of it
			if depth == 0 && reAside.MatchString(b[i:]) {
				flush(i)
			}
		case ' ':
			// " — " and " -- " open an aside (the reason, a result): a
			// clause of its own
			if depth == 0 && (strings.HasPrefix(b[i:], " — ") || strings.HasPrefix(b[i:], " -- ")) {
				flush(i)
			}
		case '.':
			if i+1 == len(b) || (b[i+1] == ' ' && depth == 0) {
				flush(i)
			}
		}
	}
	flush(len(b))
	for i := range out {
		out[i].narrative = out[i].narrative || reNarrative.MatchString(reRunKind.ReplaceAllString(out[i].text, ""))
	}
	// an aside speaks in its sentence's voice: the story or the
	// counterfactual before it ("Adopting the upstream block -- a, b,
	// X=1 -- killed the engine"), and, between two dashes, the story
	// after it; the clause before never takes the aside's
	own := make([]bool, len(out))
	for i := range out {
		own[i] = out[i].narrative
	}
	for i := first + 1; i < len(out); i++ {
		if !out[i].aside {
			continue
		}
		prev := out[i-1]
		out[i].narrative = out[i].narrative || prev.narrative || (out[i].closed && i+1 < len(out) && own[i+1])
		if out[i].ctx == ctxNone && contextOf(prev.text) == ctxCounter {
			out[i].ctx = ctxCounter
		}
	}
	return out
}

// ctoken is a claim candidate found in a clause.
type ctoken struct {
	start, end int
	claim      Claim
}

func extractBullet(b string, options func(string) bool) []Claim {
	var out []Claim
	b = reURL.ReplaceAllStringFunc(b, func(s string) string { return strings.Repeat(" ", len(s)) })
	for _, cl := range splitClauses(b) {
		t := cl.text
		var toks []ctoken
		// images first; their text is masked from the other matchers
		masked := []byte(t)
		mask := func(s, e int) {
			for k := s; k < e; k++ {
				masked[k] = ' '
			}
		}
		for _, m := range reImage.FindAllStringIndex(t, -1) {
			ref := t[m[0]:m[1]]
			if !strings.ContainsAny(ref, ":@") || strings.Count(ref, "/") > 3 {
				if strings.Count(ref, "/") >= 2 {
					mask(m[0], m[1]) // a path, not an image
				}
				continue
			}
			toks = append(toks, ctoken{m[0], m[1], Claim{Kind: KindImage, Text: ref, Name: imageRepo(ref), Value: ref, Strong: true}})
			mask(m[0], m[1])
		}
		// remaining path-like words (a/b/c, file.sh) carry no claims
		for _, m := range rePath.FindAllStringIndex(string(masked), -1) {
			mask(m[0], m[1])
		}
		if imageClause.MatchString(t) {
			for _, m := range reTag.FindAllStringSubmatchIndex(string(masked), -1) {
				tag := strings.TrimRight(strings.TrimSpace(string(masked[m[4]:m[5]])), ".,`")
				if tag == "latest" && strings.TrimSpace(t[m[4]+len("latest"):]) != "" {
					continue // "to latest repo:tag": an adjective
				}
				m[5] = m[4] + len(tag)
				toks = append(toks, ctoken{m[4], m[5], Claim{Kind: KindImage, Text: t[m[0]:m[5]], Value: tag, Strong: true}})
				mask(m[4], m[5])
			}
		}
		// conditions: their comparisons are no claims of their own
		when, spans := conditions(string(masked))
		for _, sp := range spans {
			mask(sp[0], sp[1])
		}
		for _, m := range reEnvPair.FindAllStringSubmatchIndex(string(masked), -1) {
			mask(m[2], m[3]) // "PREFILL_NODES=1/DECODE_NODES=1": two settings
		}
		ms := string(masked)
		for _, m := range reEnvSet.FindAllStringSubmatchIndex(ms, -1) {
			mask(m[0], m[1])
			if bound(ms[:m[0]]) {
				continue // "(>= MIN_EVAL_CONC=16)": a threshold named, not a variable set
			}
			name, val := ms[m[2]:m[3]], strings.TrimRight(strings.Trim(ms[m[4]:m[5]], `"'`+"`"), ".:,")
			c, end := Claim{Kind: KindEnv, Name: name, Value: val, Strong: true}, m[1]
			if to, n, ok := statedArrow(ms[m[1]:]); ok { // X=0 -> 1
				c.From, c.Value, c.stated, end = val, to, true, m[1]+n
				mask(m[1], end)
			}
			c.Text = ms[m[0]:end]
			toks = append(toks, ctoken{m[0], end, c})
		}
		ms = string(masked)
		for _, m := range reFlag.FindAllStringSubmatchIndex(ms, -1) {
			c := Claim{Kind: KindFlag, Name: ms[m[2]:m[3]], Strong: true}
			end := m[3]
			if m[4] >= 0 {
				v := strings.Trim(ms[m[4]:m[5]], `"'`)
				// a value cut short by a masked path ("--chat_template
				// /scratch/x.jinja" reads "/") is no value
				cut := m[5] < len(t) && ms[m[5]] == ' ' && t[m[5]] != ' '
				if !cut && !rePos.MatchString(v) && !reNeg.MatchString(v) && !stopWords[strings.ToLower(v)] {
					c.Value, end = v, m[5]
					// "--x 0.9" opening a bullet states the value
					c.stated = strings.Trim(ms[:m[2]], " `-*") == "" && looksLikeValue(v) && !reFormula.MatchString(ms[m[5]:])
					c.listed = reListNext.MatchString(ms[m[5]:]) || (reListPrev.MatchString(ms[:m[2]]) && reListEnd.MatchString(ms[m[5]:]))
				}
			}
			end = statedValue(&c, ms[:m[2]], ms[m[3]:], m[3], end)
			c.Text = ms[m[2]:end]
			toks = append(toks, ctoken{m[2], end, c})
			mask(m[2], end)
		}
		ms = string(masked)
		for _, m := range reEnvName.FindAllStringIndex(ms, -1) {
			name := ms[m[0]:m[1]]
			if falseName[name] || len(name) < 6 {
				continue
			}
			if reValueNoun.MatchString(ms[m[1]:]) {
				continue // "with TRITON_UNFUSED fallback": a backend's name, not a variable
			}
			c := Claim{Kind: KindEnv, Name: name}
			end := statedValue(&c, ms[:m[0]], ms[m[1]:], m[1], m[1])
			c.Text = ms[m[0]:end]
			toks = append(toks, ctoken{m[0], end, c})
			mask(m[0], end)
		}
		ms = string(masked)
		for _, m := range reBare.FindAllStringIndex(ms, -1) {
			w := ms[m[0]:m[1]]
			c := Claim{Kind: KindFlag, Name: "--" + w}
			end := statedValue(&c, ms[:m[0]], ms[m[1]:], m[1], m[1])
			if !knownFlags[w] {
				// a word the repository's scripts pass as an option is read
				// as that option only when a value is stated for it ("pin
				// max-num-batched-tokens to 8192"): named in passing
				// ("top-k 1", "chat-template inputs") it is prose
				vocab := options != nil && options(w)
				if !c.stated || (c.From == "" && !vocab) || configWords[w] || strings.HasPrefix(strings.TrimSpace(ms[m[1]:]), ":") {
					continue // a word of prose, a config field, a recipe key ("KEY: A → B"), not an option
				}
				c.prose = !vocab // "num-draft-tokens 4→6": a setting by the value it states
			}
			c.Text = ms[m[0]:end]
			toks = append(toks, ctoken{m[0], end, c})
			mask(m[0], end)
		}
		ms = string(masked)
		taken := func(start, end int) bool {
			for _, tk := range toks {
				if tk.start < end && start < tk.end {
					return true
				}
			}
			return reKV.MatchString(ms[start:end]) || reSpec.MatchString(ms[start:end]) || rePar.MatchString(ms[start:end])
		}
		for _, tk := range switchTokens(t, ms, options, taken) {
			toks = append(toks, tk)
			mask(tk.start, tk.end)
		}
		ms = string(masked)
		for _, m := range reKV.FindAllStringIndex(ms, -1) {
			w := strings.ToLower(ms[m[0]:m[1]])
			name := kvNames.Replace(w)
			toks = append(toks, ctoken{m[0], m[1], Claim{Kind: KindKV, Text: ms[m[0]:m[1]], Name: name}})
		}
		for _, m := range reSpec.FindAllStringIndex(ms, -1) {
			w := strings.ToLower(ms[m[0]:m[1]])
			c := Claim{Kind: KindSpec, Text: ms[m[0]:m[1]], Name: w}
			if w == "non-mtp" || w == "no mtp" || w == "no-mtp" || w == "without mtp" || w == "stp" {
				// "the non-MTP entry", "the STP recipe": a reference to a
				// sibling far more often than a claim
				mask(m[0], m[1])
				continue
			}
			toks = append(toks, ctoken{m[0], m[1], c})
		}
		if !cl.narrative {
			for _, m := range reConcFrom.FindAllStringSubmatchIndex(ms, -1) {
				n := func(k int) int64 { v, _ := strconv.ParseInt(ms[m[2*k]:m[2*k+1]], 10, 64); return v }
				if n(1) <= n(2) && n(3) <= n(4) && n(4) > 0 {
					toks = append(toks, ctoken{m[0], m[1], Claim{Kind: KindConc, Text: ms[m[0]:m[1]],
						Range: []int64{n(3), n(4)}, From: fmt.Sprintf("%d-%d", n(1), n(2))}})
					mask(m[0], m[1])
				}
			}
			ms = string(masked)
			for _, m := range reConcFromList.FindAllStringSubmatchIndex(ms, -1) {
				from, to := ms[m[2]:m[3]], ms[m[4]:m[5]]
				if !strings.HasPrefix(from, "[") && !strings.HasPrefix(to, "[") {
					continue // "from 4 to 64": a range said in words
				}
				c := Claim{Kind: KindConc, Text: ms[m[0]:m[1]], From: concSide(from)}
				if r := concNums(to); strings.HasPrefix(to, "[") || !strings.ContainsAny(to, "-–") {
					c.Conc = r
				} else if len(r) == 2 && r[0] <= r[1] {
					c.Range = r
				}
				if c.From == "" || (len(c.Conc) == 0 && len(c.Range) == 0) {
					continue
				}
				toks = append(toks, ctoken{m[0], m[1], c})
				mask(m[0], m[1])
			}
			ms = string(masked)
			for _, m := range reConcMax.FindAllStringSubmatchIndex(ms, -1) {
				num := m[2:4]
				if num[0] < 0 {
					num = m[4:6]
				}
				if v, err := strconv.ParseInt(strings.ReplaceAll(ms[num[0]:num[1]], ",", ""), 10, 64); err == nil && v > 0 && v <= 1<<20 {
					toks = append(toks, ctoken{m[0], m[1], Claim{Kind: KindConc, Text: ms[m[0]:m[1]], Max: v}})
					mask(m[0], m[1])
				}
			}
			ms = string(masked)
			for _, m := range reConc.FindAllStringSubmatchIndex(ms, -1) {
				c, ok := concClaim(ms, m)
				if ok {
					toks = append(toks, ctoken{m[0], m[1], c})
				}
			}
			for _, m := range reSeq.FindAllStringSubmatchIndex(ms, -1) {
				toks = append(toks, ctoken{m[0], m[1], Claim{Kind: KindSeqLen, Text: ms[m[0]:m[1]], Value: seqOf(ms, m)}})
			}
			for _, m := range rePar.FindAllStringSubmatchIndex(ms, -1) {
				if c, ok := parClaim(ms, m); ok {
					toks = append(toks, ctoken{m[0], m[1], c})
				}
			}
			for _, m := range reWorkers.FindAllStringSubmatchIndex(ms, -1) {
				if c, ok := workersClaim(ms, m); ok {
					toks = append(toks, ctoken{m[0], m[1], c})
				}
			}
		}
		sort.SliceStable(toks, func(i, j int) bool { return toks[i].start < toks[j].start })
		for _, c := range resolveClause(t, string(masked), toks, cl) {
			if c.Kind == KindFlag || c.Kind == KindEnv {
				c.When = when
			}
			c.Text = strings.Join(strings.Fields(c.Text), " ") // a blanked parenthetical inside it
			out = append(out, c)
		}
	}
	return out
}

// An option's item in a list of options: the next item is an option or
// an assignment, or the item before was an option and this one ends the
// list or its sentence.
var (
	reListNext = regexp.MustCompile(`^[` + "`" + `'"]?\s*[,;]\s*(?:--[a-zA-Z]|[A-Z][A-Z0-9_]{2,}=)`)
	reListPrev = regexp.MustCompile(`--[a-zA-Z][\w.-]*(?:[ =][^\s,;]+)?[` + "`" + `'"]?\s*[,;]\s*[` + "`" + `'"]?$`)
	reListEnd  = regexp.MustCompile(`^[` + "`" + `'"]?\s*(?:[,;)]|\.?\s*$)`)
)

// conditions reads the condition of a clause: runs of comparisons
// ("isl>=8192 && conc>=64", "ISL=8192, OSL=1024, and CONC>128", "TP=2
// EP=1 CONC<=16, TP=8 EP=8 CONC<=64"). A run is a condition when it
// compares by order, or follows "when"/"if"; a variable named again, or
// "or" ("||"), starts an alternative. spans are the runs' text.
func conditions(t string) (when [][]Cond, spans [][2]int) {
	ms := reCmp.FindAllStringSubmatchIndex(t, -1)
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && reCmpJoin.MatchString(t[ms[j-1][1]:ms[j][0]]) {
			j++
		}
		run := ms[i:j]
		ordered := false
		for _, m := range run {
			if op := t[m[4]:m[5]]; op != "=" && op != "==" {
				ordered = true
			}
		}
		if ordered || reCondWord.MatchString(t[:run[0][0]]) {
			var g []Cond
			for k, m := range run {
				if k > 0 && len(g) > 0 && reOr.MatchString(t[run[k-1][1]:m[0]]) {
					when = append(when, g) // "DP_ATTENTION=true or CONC>=64": an alternative
					g = nil
				}
				c := Cond{Var: strings.ToLower(t[m[2]:m[3]]), Op: t[m[4]:m[5]]}
				switch c.Op {
				case "≤":
					c.Op = "<="
				case "≥":
					c.Op = ">="
				case "==":
					c.Op = "="
				}
				if c.Var == "concurrency" {
					c.Var = "conc"
				}
				c.Value, _ = strconv.ParseInt(t[m[6]:m[7]], 10, 64)
				if m[8] >= 0 {
					c.Value *= 1024
				}
				if v := strings.ToLower(t[m[6]:m[7]]); strings.HasPrefix(c.Var, "dp") {
					// DP attention: "dpa = 1" (true) or "dpa = 0"; no order
					c.Var, c.Value = "dpa", 0
					if v == "true" || v == "1" {
						c.Value = 1
					}
					if c.Op != "=" {
						continue
					}
				} else if v == "true" || v == "false" {
					continue
				}
				if slices.ContainsFunc(g, func(x Cond) bool { return x.Var == c.Var }) {
					when = append(when, g)
					g = nil
				}
				g = append(g, c)
			}
			if len(g) > 0 {
				when = append(when, g)
				spans = append(spans, [2]int{run[0][0], run[len(run)-1][1]})
			}
		}
		i = j
	}
	return when, spans
}

// resolveClause applies polarity (the last verb before a claim), the
// counterfactual markers, from/to roles and row qualifiers.
// clauseReader reads the claims of one clause: t is the clause, masked
// the same with quoted and path-like spans blanked, toks the candidate
// claims found in it, in order, and words the spans of masked's words.
type clauseReader struct {
	t, masked string
	toks      []ctoken
	cl        clause
	words     [][2]int
}

// polarity is what the words before a claim make of it.
type polarity struct {
	neg      bool // a verb that removes, drops or disables governs it
	verb     bool // a verb governs it (not only the sentence around)
	counter  bool // a counterfactual or an old value ("from A", "instead of")
	governed bool // a verb, a label or the sentence around governs it
	list     bool // only names, values and "and" stand between the verb and it
	// soft: the negating verb was "disable", which does not negate a
	// claim that carries its own polarity ("disable X (X_ENABLED=0)")
	soft bool
	// with: the governing word was "with" or "via", which attach a
	// setting to another ("a ValueError with hybrid KV cache manager")
	with bool
	// absent: the negating word says what the recipe runs without ("no",
	// "without", "omit"), not a change ("remove", "drop")
	absent bool
}

// wordAt is the index of the last word ending at or before pos.
func (c *clauseReader) wordAt(pos int) int {
	k := -1
	for i, w := range c.words {
		if w[1] <= pos {
			k = i
		}
	}
	return k
}

// polarityAt reads the words before a claim at pos: a counterfactual
// marker anywhere before it in the clause cancels it; else the nearest
// verb sets its polarity.
func (c *clauseReader) polarityAt(pos int) polarity {
	t, masked, words := c.t, c.masked, c.words
	if possessive(t[:pos]) {
		return polarity{counter: true} // "glm5_b300.sh's X=900": another file's setting
	}
	k := c.wordAt(pos)
	fromOpen := true // no "to" yet between the claim and a "from"
	for i := k; i >= 0; i-- {
		w := strings.ToLower(t[words[i][0]:words[i][1]])
		if reCounter.MatchString(w) || (i > 0 && reCounter.MatchString(strings.ToLower(t[words[i-1][0]:words[i][1]]))) {
			return polarity{counter: true}
		}
		switch w {
		case "to", "into":
			fromOpen = false
		case "from":
			if fromOpen { // "from TP8/EP8 to TP8/EP1": the old value
				return polarity{counter: true}
			}
		}
	}
	with := false
	list := true
	for i := k; i >= 0; i-- {
		raw := t[words[i][0]:words[i][1]]
		w := strings.ToLower(raw)
		next := pos
		if i < k {
			next = words[i+1][0]
		}
		if strings.Contains(masked[words[i][1]:next], ": ") || strings.HasSuffix(masked[words[i][1]:next], ":") {
			// "Serve flags: --a, --b": a label governs the list; any
			// other colon ends the verb's reach
			if reLabel.MatchString(w) {
				return polarity{governed: true, list: true}
			}
			break
		}
		switch w {
		case "with", "by":
			with = true
		case "replace", "replaces", "replaced", "swap", "swaps", "swapped":
			if !with { // "replace A with B": A is the old value
				return polarity{counter: true}
			}
			return polarity{verb: true, governed: true, list: list}
		}
		if reNeg.MatchString(w) {
			if !list && determiner[w] && strings.Contains(masked[words[i][1]:pos], ",") {
				break // "no EP, dp-attn off, X=1": "no" negates EP only
			}
			return polarity{neg: true, verb: true, governed: true, list: list, soft: strings.HasPrefix(w, "disabl"),
				absent: reAbsent.MatchString(w) && (!determiner[w] || (i == k && !strings.Contains(t[words[i][1]:pos], ",")))} // "no X": X alone
		}
		if rePos.MatchString(w) || (i == 0 && reLeadVerb.MatchString(w)) {
			return polarity{verb: true, governed: true, list: list, with: w == "with" || w == "via"}
		}
		if !(reEnvName.MatchString(raw) && strings.ToUpper(raw) == raw) && w != "and" && w != "or" && !reNumber.MatchString(raw) {
			list = false
		}
	}
	if c.cl.label {
		return polarity{governed: true, list: true}
	}
	// inherited from the sentence around a parenthetical: verb stays
	// false (the clause itself asserts nothing)
	switch c.cl.ctx {
	case ctxPos:
		return polarity{governed: true, list: list}
	case ctxNeg:
		return polarity{neg: true, governed: true, list: list}
	case ctxCounter:
		return polarity{counter: true}
	}
	return polarity{}
}

// possessive says whether text before a claim ends in a file's
// possessive ("glm5.2_fp4_b300_sglang.sh's"): another file's setting.
func possessive(before string) bool {
	before = strings.TrimRight(before, " `")
	for _, suf := range []string{"'s", "’s"} {
		if w, ok := strings.CutSuffix(before, suf); ok {
			w = w[strings.LastIndexAny(w, " (`\"")+1:]
			return strings.ContainsAny(w, "._") // a file's name (x.sh, a_b), not "TP8's"
		}
	}
	return false
}

// isFrom says whether the claim at pos is the old value of "from A to B"
// or "A -> B".
// "from A to B" and "A -> B": A is the old value
func (c *clauseReader) isFrom(pos int) bool {
	t, words := c.t, c.words
	for i := c.wordAt(pos); i >= 0; i-- {
		w := strings.ToLower(t[words[i][0]:words[i][1]])
		if w == "to" || w == "into" {
			break
		}
		if w == "from" {
			return true
		}
	}
	rest := strings.TrimLeft(t[pos:], " `\"'")
	for _, tok := range c.toks {
		if tok.start >= pos {
			rest = t[tok.end:]
			break
		}
	}
	rest = strings.TrimLeft(rest, " `\"'")
	return strings.HasPrefix(rest, "->") || strings.HasPrefix(rest, "→") || strings.HasPrefix(rest, "=>")
}

// concQualifiers are the rows the conc claim at toks[ti] is about: the
// parallel groups read since the last conc claim or, when there are none,
// the ones right after it ("conc 48 and 64 to the TP8/EP1 sweep"). flipDPA
// and flipKV: "+/- DPA", "+/- HiCache" follow, and each variant must run
// the concurrency.
func (c *clauseReader) concQualifiers(ti int, groups []RowQual) (alts []RowQual, flipDPA, flipKV bool) {
	alts = groups
	if len(alts) == 0 { // "conc 48 and 64 to the TP8/EP1 sweep": the qualifiers after it
		end := c.toks[ti].end
		for tj := ti + 1; tj < len(c.toks) && c.toks[tj].claim.Kind != KindConc; tj++ {
			nt := c.toks[tj]
			if nt.start < end {
				continue // a claim within text read already (claims may overlap)
			}
			between := c.t[end:nt.start]
			if pm := strings.Contains(between, "+/-") || strings.Contains(between, "±"); pm && len(alts) > 0 {
				switch {
				case nt.claim.Kind == KindParallel && nt.claim.Row != nil && nt.claim.Row.DPA == nil && nt.claim.Negated:
					flipDPA = true
					end = nt.end
					continue
				case nt.claim.Kind == KindKV:
					flipKV = true
					end = nt.end
					continue
				}
			}
			if strings.ContainsAny(between, ",;+") {
				break
			}
			if nt.claim.Kind == KindParallel {
				if len(alts) > 0 && joined(c.t[end:nt.start]) {
					applyPar(&alts[len(alts)-1], nt.claim)
				} else {
					var g RowQual
					applyPar(&g, nt.claim)
					alts = append(alts, g)
				}
			}
			end = nt.end
		}
	}
	return alts, flipDPA, flipKV
}

// resolveClause turns the candidate claims of a clause into claims: the
// words before each set its polarity and strength, old values ("from A",
// "A -> B") are dropped, and parallel groups and sequence lengths qualify
// the conc claims they go with.
func resolveClause(t, masked string, toks []ctoken, cl clause) []Claim {
	rd := &clauseReader{t: t, masked: masked, toks: toks, cl: cl, words: wordSpans(masked)}
	var out []Claim
	var lastImage *Claim
	var groups []RowQual // parallel groups since the last conc claim
	lastPar := -1        // end of the last parallel token
	var seqs []string
	for _, tok := range toks {
		if tok.claim.Kind == KindSeqLen {
			seqs = append(seqs, tok.claim.Value)
		}
	}
	for ti, tok := range toks {
		c := tok.claim
		pol := rd.polarityAt(tok.start)
		neg, verb, counter, gov, list := pol.neg, pol.verb, pol.counter, pol.governed, pol.list
		if neg && pol.soft && ((c.Kind == KindEnv && c.Value != "") ||
			(c.Kind == KindFlag && (strings.HasPrefix(c.Name, "--disable") || strings.HasPrefix(c.Name, "--no-")))) {
			neg = false
		}
		if rd.isFrom(tok.start) {
			switch c.Kind {
			case KindImage:
				// keep as the From of the next image claim
				from := c.Value
				for tj := ti + 1; tj < len(toks); tj++ {
					if toks[tj].claim.Kind == KindImage {
						toks[tj].claim.From = from
						break
					}
				}
			}
			continue
		}
		if counter {
			continue
		}
		if after := strings.TrimLeft(t[tok.end:], " `\"'"); strings.HasPrefix(after, "->") || strings.HasPrefix(after, "→") || strings.HasPrefix(after, "=>") {
			continue // "512->256": the old value
		}
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(t[max(0, tok.start-4):tok.start])), "non") {
			continue // "non-TP8", "non-MTP" handled by the matchers
		}
		absent := neg && pol.absent
		if (c.Kind == KindEnv || c.Kind == KindFlag) && (rePostNeg.MatchString(t[tok.end:]) || rePostGone.MatchString(t[tok.end:])) {
			neg, gov = true, true // "X=1 dropped on the lmcache arms"
			absent = reAbsentAfter.MatchString(t[tok.end:])
		}
		c.Negated = c.Negated || neg
		c.absent = c.Negated && absent
		if cl.narrative && (c.Kind == KindEnv || c.Kind == KindFlag || c.Kind == KindImage) {
			if c.Negated {
				continue // "the launcher silently dropped --ep-size": history, not the change
			}
			if (!c.stated || c.From == "") && !(c.Kind == KindImage && reImageOpens.MatchString(t[:tok.start])) {
				gov = false
				c.Strong = false
			} // "raise X from 2.99 to 3.61 to reflect the measured rate": X's values, not results; "Use IMAGE because …": the image
		}
		switch c.Kind {
		case KindImage:
			if lastImage != nil && lastImage.Value == c.Value {
				continue
			}
			out = append(out, c)
			lastImage = &out[len(out)-1]
		case KindEnv:
			if !c.Strong && gov && list && (verb || c.Negated) {
				c.Strong = true // "export NAME", "enable A, B and C"
			}
			out = append(out, c)
		case KindFlag:
			if c.feature != nil {
				if rePostOff.MatchString(t[tok.end:]) {
					c.Negated, gov = true, true // "prefix caching disabled"
				} else if rePostOn.MatchString(t[tok.end:]) {
					c.Negated, gov = false, true // "with prefix caching enabled"
				} else if pol.with {
					gov = false // "a ValueError with hybrid KV cache manager"
				}
				if !gov {
					continue // a feature named in passing
				}
				switchTo(&c)
				out = append(out, c)
				continue
			}
			if !c.Strong && !c.prose && gov && verb && !strings.HasPrefix(c.Text, "-") {
				c.Strong = true // "pin max-num-batched-tokens to 8192": a verb governs an option named without dashes
			}
			if !gov && !c.Negated && !c.stated {
				if !c.Strong {
					continue // a bare name nobody governs
				}
				c.Strong, c.mention = false, true // "--flag" in prose: a mention
			}
			out = append(out, c)
		case KindSpec:
			if c.Negated {
				continue // "drop MTP rows", "no MTP yet": not a statement about what runs
			}
			c.Strong = gov && verb
			out = append(out, c)
		case KindKV:
			if rePostOff.MatchString(t[tok.end:]) {
				c.Negated, gov = true, true // "radix cache disabled"
			}
			if !gov && !c.Negated {
				c.Strong = false
			} else {
				c.Strong = true
			}
			out = append(out, c)
		case KindParallel:
			if lastPar >= 0 && len(groups) > 0 && joined(t[lastPar:tok.start]) {
				applyPar(&groups[len(groups)-1], c) // TP4/EP4, TP8+EP8
			} else {
				var g RowQual
				applyPar(&g, c)
				groups = append(groups, g)
			}
			lastPar = tok.end
			if c.Negated {
				continue
			}
			// (a layout is named mostly to say which rows: "preserving the
			// legacy 4P2D point", often another recipe's; never called
			// wrong by itself)
			c.Strong = gov && verb && len(c.Row.Workers) == 0
			out = append(out, c)
		case KindConc:
			if c.Negated {
				continue
			}
			alts, flipDPA, flipKV := rd.concQualifiers(ti, groups)
			if len(alts) == 0 && len(seqs) > 0 {
				alts = []RowQual{{}}
			}
			for _, a := range alts {
				a.Seq = seqs
				if !a.empty() {
					c.Rows = append(c.Rows, a)
				}
			}
			if flipDPA || flipKV {
				c.Variants = variants(c.Rows, flipDPA, flipKV)
			}
			c.Strong = true
			out = append(out, c)
			groups, lastPar = nil, -1
		case KindSeqLen:
			if c.Negated {
				continue
			}
			c.Strong = gov && verb
			out = append(out, c)
		}
	}
	return out
}

// variants crosses rows with DP attention and KV offloading on and off.
func variants(rows []RowQual, dpa, kv bool) []RowQual {
	out := rows
	flip := func(set func(*RowQual, bool)) {
		var next []RowQual
		for _, r := range out {
			for _, v := range []bool{false, true} {
				c := r
				set(&c, v)
				next = append(next, c)
			}
		}
		out = next
	}
	if dpa {
		flip(func(q *RowQual, v bool) { q.DPA = &v })
	}
	if kv {
		flip(func(q *RowQual, v bool) { q.KV = &v })
	}
	return out
}

// joined reports whether the text between two parallel tokens joins them
// into one group ("TP4/EP4", "TP8+EP8", "TP8 EP8").
func joined(between string) bool {
	return strings.Trim(between, " /+-") == ""
}

func applyPar(q *RowQual, c Claim) {
	if c.Row == nil {
		return
	}
	q.TP = append(q.TP, c.Row.TP...)
	q.EP = append(q.EP, c.Row.EP...)
	if len(c.Row.Workers) > 0 {
		q.Workers = c.Row.Workers
	}
	if c.Row.DPA != nil {
		q.DPA = c.Row.DPA
	}
}

func wordSpans(t string) [][2]int {
	var out [][2]int
	for _, m := range reWord.FindAllStringIndex(t, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

// concNums are the numbers of one side of "conc from A to B".
func concNums(side string) []int64 {
	var out []int64
	for _, f := range strings.FieldsFunc(side, func(r rune) bool { return r < '0' || r > '9' }) {
		if v, err := strconv.ParseInt(f, 10, 64); err == nil && v > 0 && v <= 1<<20 {
			out = append(out, v)
		}
	}
	return out
}

// concSide is the old side of "conc from A to B" as checkConcFrom reads
// it: "4-64", or a list "[1,4,8]" ("" when it holds no number).
func concSide(side string) string {
	n := concNums(side)
	switch {
	case len(n) == 0:
		return ""
	case strings.HasPrefix(side, "[") || len(n) == 1:
		parts := make([]string, len(n))
		for i, v := range n {
			parts[i] = strconv.FormatInt(v, 10)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case len(n) == 2 && n[0] <= n[1]:
		return fmt.Sprintf("%d-%d", n[0], n[1])
	}
	return ""
}

// concClaim reads the numbers of a concurrency match.
func concClaim(s string, m []int) (Claim, bool) {
	var body string
	switch {
	case m[2] >= 0:
		body = s[m[2]:m[3]]
	case m[4] >= 0:
		body = s[m[4]:m[5]]
		if m[6] >= 0 {
			body += s[m[6]:m[7]]
		}
	default:
		return Claim{}, false
	}
	text := s[m[0]:m[1]]
	isRange := reIsRange.MatchString(body)
	var nums []int64
	for _, n := range reNumber.FindAllString(body, -1) {
		// "1,024" is one number; "1,2,4" are three
		parts := []string{n}
		if strings.Contains(n, ",") && !(reThousands.MatchString(n) && n[1] == ',') {
			parts = strings.Split(n, ",")
		}
		for _, p := range parts {
			v, err := strconv.ParseInt(strings.ReplaceAll(p, ",", ""), 10, 64)
			if err == nil && v > 0 && v <= 1<<20 {
				nums = append(nums, v)
			}
		}
	}
	if len(nums) == 0 {
		return Claim{}, false
	}
	c := Claim{Kind: KindConc, Text: text}
	if isRange && len(nums) == 2 {
		if nums[0] > nums[1] {
			return Claim{}, false // "512->256": a change narrative
		}
		c.Range = nums
	} else if isRange {
		return Claim{}, false
	} else {
		c.Conc = nums
	}
	return c, true
}

func seqOf(s string, m []int) string {
	k := func(x string) string {
		switch strings.ToLower(x) {
		case "1", "1k", "1024":
			return "1024"
		case "8", "8k", "8192":
			return "8192"
		}
		return x
	}
	switch {
	case m[2] >= 0:
		return k(s[m[2]:m[3]]) + "/" + k(s[m[4]:m[5]])
	case m[6] >= 0:
		return k(s[m[6]:m[7]]) + "/" + k(s[m[8]:m[9]])
	case m[10] >= 0:
		return k(s[m[10]:m[11]]) + "/" + k(s[m[12]:m[13]])
	default:
		return k(s[m[14]:m[15]]) + "/"
	}
}

// parClaim reads "TP8", "EP=4", "DEP8", "DPA", "TP-only".
// workersClaim reads a multi-node layout: the worker counts of prefill
// and decode, and each side's parallelism when it is named ("2P-TP4/1D-TP8").
// Part of a file's name ("disagg-2p1d-dep8.yaml") it is not.
func workersClaim(s string, m []int) (Claim, bool) {
	if m[0] > 0 && strings.ContainsRune("-_/.", rune(s[m[0]-1])) || m[1] < len(s) && strings.ContainsRune("-_.", rune(s[m[1]])) {
		return Claim{}, false
	}
	p, err1 := strconv.ParseInt(s[m[2]:m[3]], 10, 64)
	d, err2 := strconv.ParseInt(s[m[8]:m[9]], 10, 64)
	if err1 != nil || err2 != nil || p == 0 || d == 0 {
		return Claim{}, false
	}
	c := Claim{Kind: KindParallel, Text: s[m[0]:m[1]], Row: &RowQual{Workers: []int64{p, d}}}
	for _, g := range [][2]int{{4, 6}, {10, 12}} { // each side's "-TP4", "-DEP8"
		if m[g[0]] < 0 {
			continue
		}
		n, err := strconv.ParseInt(s[m[g[1]]:m[g[1]+1]], 10, 64)
		if err != nil || n <= 0 || n > 1024 {
			return Claim{}, false
		}
		t := true
		switch strings.ToLower(s[m[g[0]]:m[g[0]+1]]) {
		case "tp":
			c.Row.TP = append(c.Row.TP, n)
		case "dep":
			c.Row.TP, c.Row.EP, c.Row.DPA = append(c.Row.TP, n), append(c.Row.EP, n), &t
		case "tep":
			c.Row.TP, c.Row.EP = append(c.Row.TP, n), append(c.Row.EP, n)
		}
	}
	return c, true
}

func parClaim(s string, m []int) (Claim, bool) {
	c := Claim{Kind: KindParallel, Text: s[m[0]:m[1]], Row: &RowQual{}}
	if m[0] > 0 && (s[m[0]-1] == '-' || s[m[0]-1] == '_') || m[1] < len(s) && (s[m[1]] == '-' || s[m[1]] == '_') && !strings.HasPrefix(s[m[1]:], "-only") {
		return Claim{}, false // part of a name: "2p1d-dep2-dep4"
	}
	t, f := true, false
	if m[2] >= 0 {
		n, err := strconv.ParseInt(s[m[4]:m[5]], 10, 64)
		if err != nil || n <= 0 || n > 1024 {
			return Claim{}, false
		}
		switch strings.ToLower(s[m[2]:m[3]]) {
		case "tp":
			c.Row.TP = []int64{n}
		case "ep":
			c.Row.EP = []int64{n}
		case "dp":
			c.Row.DPA = &t
		case "dep":
			c.Row.TP, c.Row.EP, c.Row.DPA = []int64{n}, []int64{n}, &t
		case "tep":
			c.Row.TP, c.Row.EP, c.Row.DPA = []int64{n}, []int64{n}, &f
		}
		return c, true
	}
	w := strings.ToLower(s[m[6]:m[7]])
	switch {
	case strings.HasPrefix(w, "non") || w == "tp-only" || strings.HasSuffix(w, "false") || w == "dp-off":
		c.Row.DPA = &f
	default:
		c.Row.DPA = &t
	}
	// "+/- DPA", "DPA on/off": both
	pre := strings.TrimSpace(s[max(0, m[0]-4):m[0]])
	post := strings.TrimSpace(s[m[1]:min(len(s), m[1]+8)])
	if rePostOff.MatchString(s[m[1]:]) && !strings.HasPrefix(post, "off/on") {
		c.Row.DPA = &f // "dp-attn off"
	}
	if strings.HasSuffix(pre, "+/-") || strings.HasSuffix(pre, "±") || strings.HasPrefix(post, "on/off") || strings.HasPrefix(post, "off/on") ||
		reBoth.MatchString(s[:m[0]]) {
		c.Row.DPA = nil
		c.Negated = true // no restriction, no claim
	}
	return c, true
}

// imageRepo is the repository of an image reference, normalised.
func imageRepo(ref string) string {
	r, _, _ := strings.Cut(ref, "@")
	if i := strings.LastIndex(r, ":"); i > strings.LastIndex(r, "/") {
		r = r[:i]
	}
	return normRepo(r)
}

func normRepo(r string) string {
	r = strings.Replace(strings.ToLower(r), "#", "/", 1) // enroot's registry#image
	for _, p := range []string{"docker.io/", "index.docker.io/", "registry-1.docker.io/"} {
		r = strings.TrimPrefix(r, p)
	}
	return strings.TrimPrefix(r, "library/")
}

// configWords are master-config fields, which bullets name with values
// ("conc-end from 64 to 256") and which are no server options.
var configWords = map[string]bool{"conc-start": true, "conc-end": true, "conc-list": true, "spec-decoding": true,
	"dp-attn": true, "kv-offloading": true, "kv-offload-backend": true, "model-prefix": true, "seq-len-configs": true,
	"search-space": true, "scenario-type": true, "config-keys": true, "pr-link": true}

// knownFlags are engine flags a bullet may name without dashes.
var knownFlags = map[string]bool{
	"disable-radix-cache": true, "enable-hierarchical-cache": true, "enable-dp-attention": true,
	"enable-expert-parallel": true, "enable-two-batch-overlap": true, "enable-dp-lm-head": true,
	"disable-cuda-graph": true, "enable-torch-compile": true, "async-scheduling": true,
	"enable-symm-mem": true, "enable-prefix-caching": true, "no-enable-prefix-caching": true,
	"disable-piecewise-cuda-graph": true, "enable-flashinfer-allreduce-fusion": true,
	"disable-shared-experts-fusion": true, "enable-chunked-prefill": true, "disable-overlap-schedule": true,
	"cuda-graph-max-bs": true, "max-num-seqs": true, "max-num-batched-tokens": true, "max-model-len": true,
	"gpu-memory-utilization": true, "mem-fraction-static": true, "chunked-prefill-size": true,
	"kv-cache-dtype": true, "attention-backend": true, "moe-runner-backend": true, "max-running-requests": true,
	"stream-interval": true, "speculative-num-steps": true, "speculative-num-draft-tokens": true,
	"speculative-eagle-topk": true, "compilation-config": true, "enable-ep-moe": true, "enable-deepep-moe": true,
	"moe-a2a-backend": true, "disable-log-requests": true, "trust-remote-code": true,
}

var reLabel = regexp.MustCompile(`(?i)\b(flags?|args|arguments|options|settings|env|envs|environment|knobs|params|parameters|image|serve|server)$`)

// bound reports whether text before a NAME=VALUE ends in a comparison
// (>=, <=, >, <, ≥, ≤): the NAME=VALUE then names a bound.
func bound(before string) bool {
	before = strings.TrimRight(before, " ")
	for _, op := range []string{">=", "<=", ">", "<", "≥", "≤"} {
		if strings.HasSuffix(before, op) {
			return true
		}
	}
	return false
}

// IsEnvName says whether n reads as an environment variable to the claims
// engine: upper case with an underscore (engine and runtime settings), not
// a loop counter or a local.
func IsEnvName(n string) bool {
	return reEnvName.MatchString(n) && strings.ToUpper(n) == n && strings.Contains(n, "_")
}
