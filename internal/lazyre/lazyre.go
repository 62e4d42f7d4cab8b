// Package lazyre compiles a regular expression on first use instead of at
// program start. A short command (a warm `perflog changelog audit` runs in
// a few milliseconds) would otherwise spend more time compiling the claim
// extractor's and the YAML resolver's patterns at init, and faulting in
// their memory, than doing its work.
//
// Dependencies: the standard library only.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles pattern once, on its first call,
// and returns the compiled expression; it panics then, as
// regexp.MustCompile would, when the pattern is invalid. It is safe for
// concurrent use.
func New(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
