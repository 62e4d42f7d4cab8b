package config

// WalkEqual switches the differ's shortcut for equal subtrees off (true)
// or on, for the tests of package config_test.
func WalkEqual(on bool) { walkEqual = on }
