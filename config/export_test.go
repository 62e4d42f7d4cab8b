package config

// WalkEqual switches the differ's shortcut for equal subtrees off (true)
// or on, for the tests of package config_test.
func WalkEqual(on bool) { walkEqual = on }

// ScoreAllMoves makes the differ score every candidate move before it
// chooses (true), as it did before it chose lazily, or not.
func ScoreAllMoves(on bool) {
	pickMoves = (*differ).pickLazily
	if on {
		pickMoves = (*differ).pickAll
	}
}
