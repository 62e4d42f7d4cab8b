package xdiff

// Match aligns two sequences of keys the way Diff aligns lines (keys are
// compared as whole records): it calls same(i, j) for every pair of
// matched items and gap(olds, news) for every run of unmatched items
// between two matches (one side may be empty), in sequence order. Callers
// use it to align records that have an identity (changelog entries, list
// items of a recipe) and then decide what the unmatched ones in each gap
// are: edits, additions or removals.
func Match(a, b []string, same func(i, j int), gap func(olds, news []int)) {
	la := make([]Line, len(a))
	for i, k := range a {
		la[i] = Line(k + "\n")
	}
	lb := make([]Line, len(b))
	for j, k := range b {
		lb[j] = Line(k + "\n")
	}
	r := DiffLines(la, lb)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var gi, gj []int
		for i < len(a) && r.Old[i] {
			gi = append(gi, i)
			i++
		}
		for j < len(b) && r.New[j] {
			gj = append(gj, j)
			j++
		}
		if len(gi) > 0 || len(gj) > 0 {
			gap(gi, gj)
			continue
		}
		if i < len(a) && j < len(b) {
			same(i, j)
			i++
			j++
		}
	}
}
