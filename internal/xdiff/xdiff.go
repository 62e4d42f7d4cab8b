// Package xdiff computes line diffs exactly the way git's default diff does.
//
// The incumbent InferenceX gate reads `git diff <base> <head>` and judges the
// '+' and '-' lines. Which lines are "added" and which are "deleted" depends on
// git's algorithm, not just on the two texts: a different minimal diff can
// rotate an inserted block (moving a "- config-keys:" line from its start to
// its end) and change a YAML verdict. This package is a faithful port of the
// parts of git's xdiff that decide that (xprepare.c: record classification,
// trimming of common ends and discarding of unmatched lines; xdiffi.c: the
// Myers divide-and-conquer with git's cost heuristics, and xdl_change_compact
// with the indent heuristic, which git enables by default since 2.14).
//
// The result is the change mask of both sides; Lines/Changes turn it into the
// '+'/'-' line lists a unified diff would print. Hunk grouping and context are
// not needed by any caller and are not produced.
//
// Dependencies: the standard library only.
package xdiff

import "bytes"

const (
	maxEqLimit        = 1024 // XDL_MAX_EQLIMIT
	simScanWindow     = 100  // XDL_SIMSCAN_WINDOW
	kpdisRun          = 4    // XDL_KPDIS_RUN
	maxCostMin        = 256  // XDL_MAX_COST_MIN
	heurMinCost       = 256  // XDL_HEUR_MIN_COST
	snakeCnt          = 20   // XDL_SNAKE_CNT
	kHeur             = 4    // XDL_K_HEUR
	lineMax           = int(^uint(0) >> 1)
	indentMaxSliding  = 100 // INDENT_HEURISTIC_MAX_SLIDING
	maxIndent         = 200
	maxBlanks         = 20
	startOfFilePen    = 1
	endOfFilePen      = 21
	totalBlankWeight  = -30
	postBlankWeight   = 6
	relIndentPen      = -4
	relIndentBlankPen = 10
	relOutdentPen     = 24
	relOutdentBlank   = 17
	relDedentPen      = 23
	relDedentBlankPen = 17
	indentWeight      = 60
)

// Line is one record of a file: its bytes including the terminating '\n'
// (absent only on a last line without newline).
type Line []byte

// SplitLines splits data into records the way xdiff does: after every '\n',
// keeping the newline; a final line without newline is its own record.
func SplitLines(data []byte) []Line {
	var out []Line
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, Line(data))
			break
		}
		out = append(out, Line(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

// file is xdfile_t: the records, their equivalence classes, and the change
// mask with a sentinel slot on each side (rchg[-1] and rchg[nrec] are 0).
type file struct {
	recs   []Line
	ha     []int // class of every record
	rchg   []bool
	dstart int
	dend   int
	// reduced view handed to the Myers core
	rindex []int
	rha    []int
}

func (f *file) chg(i int) bool      { return f.rchg[i+1] }
func (f *file) set(i int, v bool)   { f.rchg[i+1] = v }
func (f *file) nrec() int           { return len(f.recs) }
func (f *file) match(a, b int) bool { return f.ha[a] == f.ha[b] }

// Result holds the change masks of a diff: Old[i] is true when line i of the
// old text is deleted, New[j] when line j of the new text is added.
type Result struct {
	OldLines, NewLines []Line
	Old, New           []bool
}

// Diff diffs two texts with git's default options (Myers, indent heuristic).
func Diff(old, new []byte) *Result {
	return DiffLines(SplitLines(old), SplitLines(new))
}

// DiffLines diffs two record lists (see SplitLines).
func DiffLines(a, b []Line) *Result {
	f1 := &file{recs: a}
	f2 := &file{recs: b}
	classes := classify(f1, f2)
	trimEnds(f1, f2)
	cleanupRecords(f1, f2, classes)

	n1, n2 := len(f1.rindex), len(f2.rindex)
	ndiags := n1 + n2 + 3
	kv := make([]int, 2*ndiags+2)
	env := &algoEnv{
		kvdf: kv[:ndiags], kvdb: kv[ndiags:],
		off: n2 + 1,
	}
	env.mxcost = bogosqrt(ndiags)
	if env.mxcost < maxCostMin {
		env.mxcost = maxCostMin
	}
	env.recsCmp(f1, 0, n1, f2, 0, n2, false)

	changeCompact(f1, f2)
	changeCompact(f2, f1)

	r := &Result{OldLines: a, NewLines: b, Old: make([]bool, len(a)), New: make([]bool, len(b))}
	for i := range a {
		r.Old[i] = f1.chg(i)
	}
	for j := range b {
		r.New[j] = f2.chg(j)
	}
	return r
}

// Deleted returns the deleted lines of the old text, in order.
func (r *Result) Deleted() []Line { return pick(r.OldLines, r.Old) }

// Added returns the added lines of the new text, in order.
func (r *Result) Added() []Line { return pick(r.NewLines, r.New) }

// AddedIndex returns the 0-based indexes of the added lines of the new text.
func (r *Result) AddedIndex() []int {
	var out []int
	for i, c := range r.New {
		if c {
			out = append(out, i)
		}
	}
	return out
}

func pick(lines []Line, mask []bool) []Line {
	var out []Line
	for i, c := range mask {
		if c {
			out = append(out, lines[i])
		}
	}
	return out
}

// classify assigns every distinct record content a class id shared by both
// files and counts occurrences per side (xdl_classify_record).
type class struct{ len1, len2 int }

func classify(f1, f2 *file) []class {
	ids := make(map[string]int, len(f1.recs)+len(f2.recs))
	var classes []class
	assign := func(f *file, side int) {
		f.ha = make([]int, len(f.recs))
		f.rchg = make([]bool, len(f.recs)+2)
		for i, r := range f.recs {
			id, ok := ids[string(r)]
			if !ok {
				id = len(classes)
				ids[string(r)] = id
				classes = append(classes, class{})
			}
			if side == 1 {
				classes[id].len1++
			} else {
				classes[id].len2++
			}
			f.ha[i] = id
		}
	}
	assign(f1, 1)
	assign(f2, 2)
	return classes
}

func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

func trimEnds(f1, f2 *file) {
	lim := min(f1.nrec(), f2.nrec())
	i := 0
	for ; i < lim; i++ {
		if f1.ha[i] != f2.ha[i] {
			break
		}
	}
	f1.dstart, f2.dstart = i, i
	j := 0
	for lim -= i; j < lim; j++ {
		if f1.ha[f1.nrec()-1-j] != f2.ha[f2.nrec()-1-j] {
			break
		}
	}
	f1.dend = f1.nrec() - j - 1
	f2.dend = f2.nrec() - j - 1
}

func cleanMmatch(dis []byte, i, s, e int) bool {
	if i-s > simScanWindow {
		s = i - simScanWindow
	}
	if e-i > simScanWindow {
		e = i + simScanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}

func cleanupRecords(f1, f2 *file, classes []class) {
	dis1 := make([]byte, f1.nrec()+1)
	dis2 := make([]byte, f2.nrec()+1)
	mark := func(f *file, dis []byte, other func(c class) int) {
		mlim := bogosqrt(f.nrec())
		if mlim > maxEqLimit {
			mlim = maxEqLimit
		}
		for i := f.dstart; i <= f.dend; i++ {
			nm := other(classes[f.ha[i]])
			switch {
			case nm == 0:
				dis[i] = 0
			case nm >= mlim:
				dis[i] = 2
			default:
				dis[i] = 1
			}
		}
	}
	mark(f1, dis1, func(c class) int { return c.len2 })
	mark(f2, dis2, func(c class) int { return c.len1 })
	keep := func(f *file, dis []byte) {
		for i := f.dstart; i <= f.dend; i++ {
			if dis[i] == 1 || (dis[i] == 2 && !cleanMmatch(dis, i, f.dstart, f.dend)) {
				f.rindex = append(f.rindex, i)
				f.rha = append(f.rha, f.ha[i])
			} else {
				f.set(i, true)
			}
		}
	}
	keep(f1, dis1)
	keep(f2, dis2)
}

type algoEnv struct {
	kvdf, kvdb []int
	off        int // index of diagonal 0 in kvdf/kvdb
	mxcost     int
}

func (e *algoEnv) fget(d int) int { return e.kvdf[d+e.off] }
func (e *algoEnv) fput(d, v int)  { e.kvdf[d+e.off] = v }
func (e *algoEnv) bget(d int) int { return e.kvdb[d+e.off] }
func (e *algoEnv) bput(d, v int)  { e.kvdb[d+e.off] = v }

type split struct {
	i1, i2       int
	minLo, minHi bool
}

// recsCmp is xdl_recs_cmp over the reduced record views.
func (e *algoEnv) recsCmp(f1 *file, off1, lim1 int, f2 *file, off2, lim2 int, needMin bool) {
	ha1, ha2 := f1.rha, f2.rha
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			f2.set(f2.rindex[off2], true)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			f1.set(f1.rindex[off1], true)
		}
	default:
		spl := e.split(ha1, off1, lim1, ha2, off2, lim2, needMin)
		e.recsCmp(f1, off1, spl.i1, f2, off2, spl.i2, spl.minLo)
		e.recsCmp(f1, spl.i1, lim1, f2, spl.i2, lim2, spl.minHi)
	}
}

// split is xdl_split: find the middle snake, or give up with a heuristic cut.
func (e *algoEnv) split(ha1 []int, off1, lim1 int, ha2 []int, off2, lim2 int, needMin bool) split {
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	var spl split

	e.fput(fmid, off1)
	e.bput(bmid, lim1)

	for ec := 1; ; ec++ {
		gotSnake := false

		if fmin > dmin {
			fmin--
			e.fput(fmin-1, -1)
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			e.fput(fmax+1, -1)
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if e.fget(d-1) >= e.fget(d+1) {
				i1 = e.fget(d-1) + 1
			} else {
				i1 = e.fget(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > snakeCnt {
				gotSnake = true
			}
			e.fput(d, i1)
			if odd && bmin <= d && d <= bmax && e.bget(d) <= i1 {
				return split{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}

		if bmin > dmin {
			bmin--
			e.bput(bmin-1, lineMax)
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			e.bput(bmax+1, lineMax)
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if e.bget(d-1) < e.bget(d+1) {
				i1 = e.bget(d - 1)
			} else {
				i1 = e.bget(d+1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > snakeCnt {
				gotSnake = true
			}
			e.bput(d, i1)
			if !odd && fmin <= d && d <= fmax && i1 <= e.fget(d) {
				return split{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}

		if needMin {
			continue
		}

		if gotSnake && ec > heurMinCost {
			best := 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := e.fget(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > kHeur*ec && v > best &&
					off1+snakeCnt <= i1 && i1 < lim1 &&
					off2+snakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == snakeCnt {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = true, false
				return spl
			}
			best = 0
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := e.bget(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > kHeur*ec && v > best &&
					off1 < i1 && i1 <= lim1-snakeCnt &&
					off2 < i2 && i2 <= lim2-snakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == snakeCnt-1 {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = false, true
				return spl
			}
		}

		if ec >= e.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(e.fget(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1 = lim2 + d
					i2 = lim2
				}
				if fbest < i1+i2 {
					fbest = i1 + i2
					fbest1 = i1
				}
			}
			bbest, bbest1 := lineMax, lineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, e.bget(d))
				i2 := i1 - d
				if i2 < off2 {
					i1 = off2 + d
					i2 = off2
				}
				if i1+i2 < bbest {
					bbest = i1 + i2
					bbest1 = i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return split{i1: fbest1, i2: fbest - fbest1, minLo: true, minHi: false}
			}
			return split{i1: bbest1, i2: bbest - bbest1, minLo: false, minHi: true}
		}
	}
}

// ---- xdl_change_compact with the indent heuristic ----

type group struct{ start, end int }

func groupInit(f *file) group {
	g := group{}
	for f.chg(g.end) {
		g.end++
	}
	return g
}

func groupNext(f *file, g *group) bool {
	if g.end == f.nrec() {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; f.chg(g.end); g.end++ {
	}
	return true
}

func groupPrevious(f *file, g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; f.chg(g.start - 1); g.start-- {
	}
	return true
}

func groupSlideDown(f *file, g *group) bool {
	if g.end < f.nrec() && f.match(g.start, g.end) {
		f.set(g.start, false)
		g.start++
		f.set(g.end, true)
		g.end++
		for f.chg(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func groupSlideUp(f *file, g *group) bool {
	if g.start > 0 && f.match(g.start-1, g.end-1) {
		g.start--
		f.set(g.start, true)
		g.end--
		f.set(g.end, false)
		for f.chg(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func getIndent(rec Line) int {
	ret := 0
	for _, c := range rec {
		if !isSpace(c) {
			return ret
		} else if c == ' ' {
			ret++
		} else if c == '\t' {
			ret += 8 - ret%8
		}
		if ret >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

type splitMeasure struct {
	endOfFile                                          bool
	indent, preBlank, preIndent, postBlank, postIndent int
}

func measureSplit(f *file, split int) splitMeasure {
	var m splitMeasure
	if split >= f.nrec() {
		m.endOfFile = true
		m.indent = -1
	} else {
		m.indent = getIndent(f.recs[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		m.preIndent = getIndent(f.recs[i])
		if m.preIndent != -1 {
			break
		}
		m.preBlank++
		if m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < f.nrec(); i++ {
		m.postIndent = getIndent(f.recs[i])
		if m.postIndent != -1 {
			break
		}
		m.postBlank++
		if m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

type splitScore struct{ effectiveIndent, penalty int }

func scoreAddSplit(m splitMeasure, s *splitScore) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePen
	}
	if m.endOfFile {
		s.penalty += endOfFilePen
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight * totalBlank
	s.penalty += postBlankWeight * postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += indent
	switch {
	case indent == -1:
	case m.preIndent == -1:
	case indent > m.preIndent:
		if anyBlanks {
			s.penalty += relIndentBlankPen
		} else {
			s.penalty += relIndentPen
		}
	case indent == m.preIndent:
	default:
		if m.postIndent != -1 && m.postIndent > indent {
			if anyBlanks {
				s.penalty += relOutdentBlank
			} else {
				s.penalty += relOutdentPen
			}
		} else {
			if anyBlanks {
				s.penalty += relDedentBlankPen
			} else {
				s.penalty += relDedentPen
			}
		}
	}
}

func scoreCmp(s1, s2 splitScore) int {
	cmp := 0
	if s1.effectiveIndent > s2.effectiveIndent {
		cmp = 1
	} else if s1.effectiveIndent < s2.effectiveIndent {
		cmp = -1
	}
	return indentWeight*cmp + (s1.penalty - s2.penalty)
}

func changeCompact(f, fo *file) {
	g := groupInit(f)
	gother := groupInit(fo)
	for {
		if g.end != g.start {
			var groupsize, earliestEnd, endMatchingOther int
			for {
				groupsize = g.end - g.start
				endMatchingOther = -1
				for groupSlideUp(f, &g) {
					groupPrevious(fo, &gother)
				}
				earliestEnd = g.end
				if gother.end > gother.start {
					endMatchingOther = g.end
				}
				for groupSlideDown(f, &g) {
					groupNext(fo, &gother)
					if gother.end > gother.start {
						endMatchingOther = g.end
					}
				}
				if groupsize == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
			case endMatchingOther != -1:
				for gother.end == gother.start {
					groupSlideUp(f, &g)
					groupPrevious(fo, &gother)
				}
			default:
				shift := earliestEnd
				if g.end-groupsize-1 > shift {
					shift = g.end - groupsize - 1
				}
				if g.end-indentMaxSliding > shift {
					shift = g.end - indentMaxSliding
				}
				bestShift := -1
				var best splitScore
				for ; shift <= g.end; shift++ {
					var score splitScore
					scoreAddSplit(measureSplit(f, shift), &score)
					scoreAddSplit(measureSplit(f, shift-groupsize), &score)
					if bestShift == -1 || scoreCmp(score, best) <= 0 {
						best = score
						bestShift = shift
					}
				}
				for g.end > bestShift {
					groupSlideUp(f, &g)
					groupPrevious(fo, &gother)
				}
			}
		}
		if !groupNext(f, &g) {
			break
		}
		groupNext(fo, &gother)
	}
}
