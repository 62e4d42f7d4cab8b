// Package assockeys quotes the associative-array keys that mvdan.cc/sh
// cannot parse: its parser is static, so it reads every array index as
// arithmetic, and a key such as [1024:4:4:false:4]=4, or a lookup
// ${MAP[${ISL}:${TP}]}, stops the parse ("ternary operator missing ?").
// Bash reads them as strings once the array is declared -A; quoted, they
// mean the same to both.
//
// Dependencies: the standard library only.
package assockeys

import "regexp"

var (
	// [a:b]=x at the start of a line (a compound assignment's element)
	reKey = regexp.MustCompile(`(?m)^([ \t]*)\[([^\]"'$\n]*:[^\]"'$\n]*)\]=`)
	// ${NAME[a:b]...}
	reIndex = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\[([^\]"'\n]*:[^\]"'\n]*)\]`)
)

// Quote returns src with such keys quoted: the same lines, and each
// quoted key two columns wider. Only keys with a colon are touched, which
// arithmetic cannot hold outside a ternary, so src is returned as it is
// when it has none; callers quote only after a parse of src failed.
func Quote(src []byte) []byte {
	out := reKey.ReplaceAll(src, []byte(`$1["$2"]=`))
	return reIndex.ReplaceAll(out, []byte(`$${${1}["$2"]`))
}
