package claims

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/config"
)

func (q *RowQual) match(r config.Row) bool {
	if q == nil {
		return true
	}
	if len(q.TP) > 0 {
		ok := false
		for _, n := range q.TP {
			ok = ok || r.HasTP(n)
		}
		if !ok {
			return false
		}
	}
	if len(q.EP) > 0 {
		ok := false
		for _, n := range q.EP {
			ok = ok || r.HasEP(n) || (n == 1 && len(r.EP) == 0)
		}
		if !ok {
			return false
		}
	}
	if q.DPA != nil && !r.HasDPA(*q.DPA) {
		return false
	}
	if !q.oneSide(r) {
		return false
	}
	// (a row that does not say its worker counts is not told apart by them)
	if len(q.Workers) == 2 && len(r.Workers) == 2 && r.Workers[0] > 0 && r.Workers[1] > 0 && (r.Workers[0] != q.Workers[0] || r.Workers[1] != q.Workers[1]) {
		return false
	}
	if q.KV != nil && *q.KV != (r.KVOffloading != "" && r.KVOffloading != "none") {
		return false
	}
	if len(q.Seq) > 0 && r.ISL != 0 {
		ok := false
		for _, sq := range q.Seq {
			isl, osl, _ := strings.Cut(sq, "/")
			ok = ok || (fmt.Sprint(r.ISL) == isl && (osl == "" || fmt.Sprint(r.OSL) == osl))
		}
		if !ok {
			return false
		}
	}
	return true
}

// oneSide says whether one side of a multi-node row has every
// parallelism q names together: "tep8 decode" (tp 8, ep 8, no DP
// attention) is not a row of a DEP4 prefill and a TEP8 decode side read
// across its sides.
func (q *RowQual) oneSide(r config.Row) bool {
	n := 0
	for _, set := range []bool{len(q.TP) > 0, len(q.EP) > 0, q.DPA != nil} {
		if set {
			n++
		}
	}
	if n < 2 || len(r.TP) < 2 {
		return true
	}
	for i, tp := range r.TP {
		ep := int64(1)
		if i < len(r.EP) && r.EP[i] > 0 {
			ep = r.EP[i]
		}
		dpa := i < len(r.DPA) && r.DPA[i]
		if (len(q.TP) == 0 || slices.Contains(q.TP, tp)) && (len(q.EP) == 0 || slices.Contains(q.EP, ep)) && (q.DPA == nil || *q.DPA == dpa) {
			return true
		}
	}
	return false
}

func rowText(r keyedRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", r.key)
	if r.ISL != 0 {
		fmt.Fprintf(&b, " %d/%d", r.ISL, r.OSL)
	}
	fmt.Fprintf(&b, " tp=%v", ints(r.TP))
	if len(r.EP) > 0 {
		fmt.Fprintf(&b, " ep=%v", ints(r.EP))
	}
	if len(r.DPA) > 0 {
		fmt.Fprintf(&b, " dp-attn=%v", r.DPA)
	}
	fmt.Fprintf(&b, " conc=%v", ints(r.Conc))
	return b.String()
}

func ints(v []int64) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	if len(s) == 1 {
		return s[0]
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (s *subject) rowEvidence(rows []keyedRow, rev string) []Evidence {
	var ev []Evidence
	for _, r := range rows {
		ev = append(ev, Evidence{File: r.file, Line: r.Line, Text: rowText(r), Rev: rev})
	}
	return ev
}

func (s *subject) checkConc(r *Result) {
	rows := s.head.rows
	if len(rows) == 0 {
		r.set(Unverified, "the listed recipes have no search space at head")
		return
	}
	if len(r.Variants) > 0 && len(r.Conc) > 0 {
		s.checkConcVariants(r)
		return
	}
	var match []keyedRow
	for _, row := range rows {
		if matchAny(r.Rows, row.Row) {
			match = append(match, row)
		}
	}
	if len(match) == 0 && slices.ContainsFunc(r.Rows, func(q RowQual) bool { return len(q.Workers) > 0 }) {
		// "15P+3D" may count nodes, not workers: the layout aside
		r.Rows = slices.Clone(r.Rows)
		for i := range r.Rows {
			r.Rows[i].Workers = nil
		}
		for _, row := range rows {
			if matchAny(r.Rows, row.Row) {
				match = append(match, row)
			}
		}
	}
	qual := ""
	if len(r.Rows) > 0 {
		qual = " in the rows it is paired with (" + altText(r.Rows) + ")"
	}
	if len(match) == 0 {
		r.set(Unverified, "no search-space row matches "+altText(r.Rows))
		return
	}
	union := map[int64]bool{}
	lo, hi := int64(1<<62), int64(0)
	for _, row := range match {
		for _, c := range row.Conc {
			union[c] = true
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	defer func() {
		if r.every && r.Verdict == Confirmed {
			s.outsideTouched(r, match, qual) // "some row" holds; does every touched row?
		}
	}()
	if r.Max > 0 {
		for _, row := range match {
			if len(row.Conc) > 0 && slices.Max(row.Conc) == r.Max {
				r.set(Confirmed, fmt.Sprintf("a row runs up to conc %d", r.Max), s.rowEvidence([]keyedRow{row}, "head")...)
				return
			}
		}
		if hi < r.Max {
			r.set(Contradicted, fmt.Sprintf("no row%s reaches conc %d (they stop at %d)", qual, r.Max, hi), s.rowEvidence(match, "head")...)
		} else {
			r.set(Contradicted, fmt.Sprintf("no row%s stops at conc %d (they run up to %d)", qual, r.Max, hi), s.rowEvidence(match, "head")...)
		}
		return
	}
	if len(r.Range) == 2 {
		a, b := r.Range[0], r.Range[1]
		if row, ok := spans(match, a, b); ok {
			r.set(Confirmed, fmt.Sprintf("a row spans conc %d-%d", a, b), s.rowEvidence([]keyedRow{row}, "head")...)
		} else if union[a] && union[b] {
			r.set(Confirmed, fmt.Sprintf("the rows span conc %d-%d", a, b), s.rowEvidence(match[:1], "head")...)
		} else {
			missing := a
			if union[a] {
				missing = b
			}
			r.set(Contradicted, fmt.Sprintf("no row%s reaches conc %d (they run %d-%d)", qual, missing, lo, hi), s.rowEvidence(match, "head")...)
			return
		}
		if r.From != "" {
			s.checkConcFrom(r)
		}
		return
	}
	var miss []string
	for _, c := range r.Conc {
		if !union[c] {
			miss = append(miss, fmt.Sprint(c))
		}
	}
	if len(miss) == 0 {
		r.set(Confirmed, "the rows run conc "+ints(r.Conc), s.rowEvidence(match[:1], "head")...)
		if r.From != "" {
			s.checkConcFrom(r)
		}
		return
	}
	r.set(Contradicted, fmt.Sprintf("no row%s runs conc %s", qual, strings.Join(miss, ", ")), s.rowEvidence(match, "head")...)
}

// spans finds a row whose concurrencies run from a to b.
func spans(rows []keyedRow, a, b int64) (keyedRow, bool) {
	for _, row := range rows {
		if len(row.Conc) > 0 && slices.Min(row.Conc) == a && slices.Max(row.Conc) == b {
			return row, true
		}
	}
	return keyedRow{}, false
}

// checkConcFrom checks the old range of "conc from 4-64 to 4-256"
// against the base's rows (of the same qualifiers).
func (s *subject) checkConcFrom(r *Result) {
	if strings.HasPrefix(r.From, "[") {
		s.checkConcFromList(r)
		return
	}
	var a, b int64
	if _, err := fmt.Sscanf(r.From, "%d-%d", &a, &b); err != nil {
		return
	}
	var match []keyedRow
	lo, hi := int64(1<<62), int64(0)
	union := map[int64]bool{}
	for _, row := range s.base.rows {
		if matchAny(r.Rows, row.Row) && len(row.Conc) > 0 {
			match = append(match, row)
			lo, hi = min(lo, slices.Min(row.Conc)), max(hi, slices.Max(row.Conc))
			for _, c := range row.Conc {
				union[c] = true
			}
		}
	}
	if len(match) == 0 {
		return // an added recipe or row: nothing to compare
	}
	if row, ok := spans(match, a, b); ok {
		r.Evidence = append(r.Evidence, s.rowEvidence([]keyedRow{row}, "base")...)
		return
	}
	if union[a] && union[b] {
		return // the rows together ran it
	}
	r.Verdict = Contradicted
	r.Reason = fmt.Sprintf("at base no row ran conc %d-%d (they ran %d-%d)", a, b, lo, hi)
	r.Evidence = append(r.Evidence, s.rowEvidence(match, "base")...)
}

// checkConcFromList checks the old list of "conc from [1, 4, 8] to ...":
// the base's rows (of the same qualifiers) ran each of its
// concurrencies.
func (s *subject) checkConcFromList(r *Result) {
	var want []int64
	for _, f := range strings.Split(strings.Trim(r.From, "[]"), ",") {
		if v, err := strconv.ParseInt(f, 10, 64); err == nil {
			want = append(want, v)
		}
	}
	var match []keyedRow
	union := map[int64]bool{}
	for _, row := range s.base.rows {
		if matchAny(r.Rows, row.Row) && len(row.Conc) > 0 {
			match = append(match, row)
			for _, c := range row.Conc {
				union[c] = true
			}
		}
	}
	if len(match) == 0 || len(want) == 0 {
		return // an added recipe or row: nothing to compare
	}
	var miss []string
	for _, c := range want {
		if !union[c] {
			miss = append(miss, fmt.Sprint(c))
		}
	}
	if len(miss) == 0 {
		r.Evidence = append(r.Evidence, s.rowEvidence(match[:1], "base")...)
		return
	}
	var ran []int64
	for c := range union {
		ran = append(ran, c)
	}
	slices.Sort(ran)
	r.Verdict = Contradicted
	r.Reason = fmt.Sprintf("at base no row ran conc %s (they ran %s)", strings.Join(miss, ", "), ints(ran))
	r.Evidence = append(r.Evidence, s.rowEvidence(match, "base")...)
}

// checkConcVariants checks "conc X across A +/- B": every variant must
// have a row that runs each claimed concurrency.
func (s *subject) checkConcVariants(r *Result) {
	var missing []string
	var seen []keyedRow
	for _, v := range r.Variants {
		var match []keyedRow
		for _, row := range s.head.rows {
			if v.match(row.Row) {
				match = append(match, row)
			}
		}
		seen = append(seen, match...)
		for _, c := range r.Conc {
			runs := false
			for _, row := range match {
				runs = runs || row.HasConc(c)
			}
			if !runs {
				what := v.text()
				if len(match) == 0 {
					what += " (no such row)"
				}
				missing = append(missing, fmt.Sprintf("conc %d in %s", c, what))
			}
		}
	}
	if len(missing) == 0 {
		r.set(Confirmed, fmt.Sprintf("each of the %d variants runs conc %s", len(r.Variants), ints(r.Conc)), s.rowEvidence(seen[:min(1, len(seen))], "head")...)
		return
	}
	var have []keyedRow
	for _, row := range s.head.rows {
		for _, c := range r.Conc {
			if row.HasConc(c) && matchAny(r.Rows, row.Row) {
				have = append(have, row)
				break
			}
		}
	}
	reason := fmt.Sprintf("not every variant runs it: no %s", strings.Join(missing, "; no "))
	if len(have) > 0 {
		reason += fmt.Sprintf(" (only %d row%s run%s it)", len(have), map[bool]string{true: "", false: "s"}[len(have) == 1], map[bool]string{true: "s", false: ""}[len(have) == 1])
	}
	r.set(Contradicted, reason, s.rowEvidence(have, "head")...)
}

func matchAny(alts []RowQual, r config.Row) bool {
	if len(alts) == 0 {
		return true
	}
	for i := range alts {
		if alts[i].match(r) {
			return true
		}
	}
	return false
}

func altText(alts []RowQual) string {
	if len(alts) == 0 {
		return "any row"
	}
	var p []string
	for i := range alts {
		p = append(p, alts[i].text())
	}
	return strings.Join(p, " or ")
}

func (q *RowQual) text() string {
	if q.empty() {
		return "any row"
	}
	var p []string
	if len(q.Workers) == 2 {
		p = append(p, fmt.Sprintf("%dP%dD", q.Workers[0], q.Workers[1]))
	}
	if len(q.TP) > 0 {
		p = append(p, "tp "+ints(q.TP))
	}
	if len(q.EP) > 0 {
		p = append(p, "ep "+ints(q.EP))
	}
	if q.DPA != nil {
		p = append(p, fmt.Sprintf("dp-attn %v", *q.DPA))
	}
	if len(q.Seq) > 0 {
		p = append(p, strings.Join(q.Seq, " or "))
	}
	if q.KV != nil {
		p = append(p, map[bool]string{true: "with KV offloading", false: "without KV offloading"}[*q.KV])
	}
	return strings.Join(p, ", ")
}

func (s *subject) checkParallel(r *Result) {
	rows := s.head.rows
	if len(rows) == 0 {
		r.set(Unverified, "the listed recipes have no search space at head")
		return
	}
	for _, row := range rows {
		if r.Row.match(row.Row) {
			r.set(Confirmed, "a row runs "+r.Row.text(), s.rowEvidence([]keyedRow{row}, "head")...)
			return
		}
	}
	r.set(Contradicted, "no search-space row of the listed recipes runs "+r.Row.text(), s.rowEvidence(rows[:min(3, len(rows))], "head")...)
}

func (s *subject) checkSeq(r *Result) {
	var fixed []keyedRow
	for _, row := range s.head.rows {
		if row.ISL != 0 {
			fixed = append(fixed, row)
		}
	}
	if len(fixed) == 0 {
		r.set(Unverified, "the listed recipes have no fixed sequence lengths")
		return
	}
	q := &RowQual{Seq: []string{r.Value}}
	var have []string
	for _, row := range fixed {
		if q.match(row.Row) {
			r.set(Confirmed, fmt.Sprintf("a row runs isl %d / osl %d", row.ISL, row.OSL), s.rowEvidence([]keyedRow{row}, "head")...)
			return
		}
		have = append(have, fmt.Sprintf("%d/%d", row.ISL, row.OSL))
	}
	r.set(Contradicted, fmt.Sprintf("the listed recipes run %s, not %s", strings.Join(dedupe(have), ", "), r.Value), s.rowEvidence(fixed[:1], "head")...)
}

var reSpecText = regexp.MustCompile(`(?i)speculative|eagle|\bmtp\b|nextn|draft`)

func (s *subject) checkSpec(r *Result) {
	var specRows, plainRows []keyedRow
	for _, row := range s.head.rows {
		if row.Spec != "" && row.Spec != "none" {
			specRows = append(specRows, row)
		} else {
			plainRows = append(plainRows, row)
		}
	}
	keyed := false
	for _, k := range s.keys {
		keyed = keyed || strings.Contains(k, "mtp") || strings.Contains(k, "eagle")
	}
	if r.Negated {
		if len(plainRows) > 0 || len(s.head.rows) == 0 {
			r.set(Confirmed, "rows without speculative decoding exist")
			return
		}
		r.set(Contradicted, "every row of the listed recipes uses spec-decoding "+specRows[0].Spec, s.rowEvidence(specRows[:1], "head")...)
		return
	}
	if len(specRows) > 0 {
		r.set(Confirmed, "rows use spec-decoding "+specRows[0].Spec, s.rowEvidence(specRows[:1], "head")...)
		return
	}
	if keyed {
		r.set(Confirmed, "the recipe key names speculative decoding")
		return
	}
	if ev := grep(s.head.sources, reSpecText, "head", ""); len(ev) > 0 {
		r.set(Confirmed, "the files that run the recipes configure speculative decoding", ev[0])
		return
	}
	r.set(Contradicted, "no row uses spec-decoding and no file that runs the listed recipes configures speculative decoding")
}

func (s *subject) checkKV(r *Result) {
	name := r.Name
	if name == "radix cache" {
		if s.launchedRadix(r) {
			return
		}
		fl := flagOccurrences(s.head.sources, "--disable-radix-cache", "head", false)
		if r.Negated { // disable the radix cache
			if len(fl) > 0 {
				r.set(Confirmed, "--disable-radix-cache is passed", fl[0].Evidence)
				return
			}
			r.set(Contradicted, "--disable-radix-cache is passed by none of the files that run the listed recipes")
			if alt := s.similarEnv("--radix-tree"); alt != nil {
				r.Reason += "; they set " + alt.Text + " instead"
				r.Evidence = append(r.Evidence, *alt)
			}
			return
		}
		if len(fl) > 0 {
			r.set(Unverified, "--disable-radix-cache is passed somewhere", fl[0].Evidence)
			return
		}
		r.set(Confirmed, "the radix cache is not disabled")
		return
	}
	pat := map[string]string{"hicache": `(?i)hicache|hierarchical[-_ ]cache`, "lmcache": `(?i)lmcache`, "mooncake": `(?i)mooncake`, "simplecpu": `(?i)simple_?cpu|simple-cpu`}[name]
	if pat == "" {
		r.set(Unverified, "not checked")
		return
	}
	re := regexp.MustCompile(pat)
	for _, row := range s.head.rows {
		if re.MatchString(row.KVBackend) {
			if r.Negated {
				r.set(Unverified, "rows still use "+row.KVBackend, s.rowEvidence([]keyedRow{row}, "head")...)
				return
			}
			r.set(Confirmed, "rows use kv-offload-backend "+row.KVBackend, s.rowEvidence([]keyedRow{row}, "head")...)
			return
		}
	}
	ev := grep(s.head.sources, re, "head", "")
	if len(ev) == 0 {
		ev = grep(s.changed, re, "head", "")
	}
	switch {
	case r.Negated && len(ev) == 0:
		r.set(Confirmed, name+" is not used")
	case r.Negated:
		r.set(Unverified, name+" is still mentioned", ev[0])
	case len(ev) > 0:
		r.set(Confirmed, name+" is configured", ev[0])
	case s.head.drivers == 0:
		r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
	default:
		r.set(Contradicted, name+" appears in no row and no file that runs the listed recipes ("+s.filesText()+")")
	}
}

func (s *subject) checkAppendOnly(r *Result) {
	head, herr := s.ch.Head.Master()
	if herr != nil {
		r.set(Unverified, "the head master configs do not load")
		return
	}
	base, berr := s.ch.Base.Master()
	sel := map[string]map[string]bool{}
	for _, k := range s.keys {
		sel[k] = map[string]bool{}
		for _, t := range config.ScenarioTypes {
			sel[k][t] = true
		}
	}
	keys := append([]string(nil), s.keys...)
	sort.Strings(keys)
	if err := config.AppendOnlyCheck(base, berr, head, keys, sel); err != nil {
		r.set(Contradicted, err.Error())
		return
	}
	r.set(Confirmed, "every base search-space point is still generated and points were added")
}

// launchedRadix checks "enable/disable the radix cache" against the
// launches (--disable-radix-cache on the servers); ok is false without a
// complete dry run of the listed recipes.
func (s *subject) launchedRadix(r *Result) (ok bool) {
	return s.launchedSwitch(r, "--disable-radix-cache", r.Negated, true)
}

// touched are the head rows the change added or altered: those with no
// equal row (the same recipe, scenario, sequence lengths, parallelism,
// speculative decoding, KV offloading and concurrencies) at base.
func (s *subject) touched(rows []keyedRow) []keyedRow {
	same := func(a, b keyedRow) bool {
		return a.key == b.key && a.Scenario == b.Scenario && a.ISL == b.ISL && a.OSL == b.OSL &&
			slices.Equal(a.TP, b.TP) && slices.Equal(a.EP, b.EP) && slices.Equal(a.DPA, b.DPA) && a.Spec == b.Spec &&
			a.KVOffloading == b.KVOffloading && a.KVBackend == b.KVBackend && slices.Equal(a.Conc, b.Conc)
	}
	var out []keyedRow
	for _, h := range rows {
		if !slices.ContainsFunc(s.base.rows, func(b keyedRow) bool { return same(h, b) }) {
			out = append(out, h)
		}
	}
	return out
}

// outsideTouched checks a range or a cap of concurrency ("conc 4-256",
// "up to 256") against every row the change touched among the rows it
// speaks of (match): one that runs a concurrency outside it contradicts
// the claim. ok is true when it did.
func (s *subject) outsideTouched(r *Result, match []keyedRow, qual string) (ok bool) {
	lo, hi := int64(1), r.Max
	if len(r.Range) == 2 {
		lo, hi = r.Range[0], r.Range[1]
	}
	if hi <= 0 {
		return false
	}
	for _, row := range s.touched(match) {
		if len(row.Conc) == 0 {
			continue
		}
		a, b := slices.Min(row.Conc), slices.Max(row.Conc)
		if a >= lo && b <= hi || describedElsewhere(r.others, row) || !plainFor(r.Rows, row) {
			continue
		}
		what := fmt.Sprintf("outside conc %d-%d", lo, hi)
		if len(r.Range) != 2 {
			what = fmt.Sprintf("past conc %d", hi)
		}
		r.Evidence = nil
		r.set(Contradicted, fmt.Sprintf("a row this change touched%s runs conc %d-%d, %s: %s", qual, a, b, what, rowName(row)), s.rowEvidence([]keyedRow{row}, "head")...)
		return true
	}
	return false
}

// rowName names a search-space row: its recipe, sequence lengths and
// parallelism.
func rowName(row keyedRow) string {
	parts := []string{row.key}
	if row.ISL > 0 {
		parts = append(parts, fmt.Sprintf("isl %d / osl %d", row.ISL, row.OSL))
	}
	for i, tp := range row.TP {
		p := fmt.Sprintf("tp %d", tp)
		if i < len(row.EP) && row.EP[i] > 1 {
			p += fmt.Sprintf(" ep %d", row.EP[i])
		}
		if i < len(row.DPA) && row.DPA[i] {
			p += " dpa"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// describedElsewhere says whether another concurrency claim of the entry
// speaks of a row: its qualifiers name it (not by default: a claim
// without qualifiers names no row in particular) and its concurrencies
// hold the row's.
func describedElsewhere(others []Claim, row keyedRow) bool {
	for _, o := range others {
		if len(o.Rows) == 0 || !matchAny(o.Rows, row.Row) {
			continue
		}
		switch {
		case len(o.Range) == 2:
			if slices.Min(row.Conc) >= o.Range[0] && slices.Max(row.Conc) <= o.Range[1] {
				return true
			}
		case o.Max > 0:
			if slices.Max(row.Conc) <= o.Max {
				return true
			}
		case len(o.Conc) > 0:
			if !slices.ContainsFunc(row.Conc, func(c int64) bool { return !slices.Contains(o.Conc, c) }) {
				return true
			}
		}
	}
	return false
}

// plainFor says whether a row is one a claim's qualifiers name in the
// plain reading: qualifiers that name a parallelism but leave DP
// attention unsaid ("TP8 conc 4-64") speak of the rows without it, since
// a bullet names the DPA variant when it means it. Qualifiers of
// sequence lengths alone ("1k1k conc 4-64") speak of every row of them.
func plainFor(alts []RowQual, row keyedRow) bool {
	if len(alts) == 0 {
		return true
	}
	for _, q := range alts {
		if q.DPA != nil || !row.HasDPA(true) || (len(q.TP) == 0 && len(q.EP) == 0) {
			return true
		}
	}
	return false
}
