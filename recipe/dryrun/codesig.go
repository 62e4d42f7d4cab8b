package dryrun

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"

	"github.com/perflog/perflog/internal/lru"
	"github.com/perflog/perflog/recipe/revfs"
	"mvdan.cc/sh/v3/syntax"
)

// A dry run over a history reads the same shell helper at many commits,
// and most changes to it are to functions the run never calls. A code
// signature is what of a shell file a run can depend on: its top-level
// statements and the functions it called, in order. Memo compares
// signatures when a file's object changed, so such a change costs a hash,
// not every point's dry run (docs/dev/performance.md has the gain).

// codeShape is a shell file cut into its top-level statements.
type codeShape struct {
	OK bool // false: the file cannot be signed (parse error, line numbers read)
	// Global: the file lists or locates the shell's functions (declare -F,
	// compgen, caller, BASH_LINENO), so no file of the run can be signed
	Global bool
	Empty  bool
	Spans  []codeSpan
}

// codeSpan is one top-level statement from its start to the next one's:
// Fn is the function it declares ("" for any other statement), Sum the
// digest of its text.
type codeSpan struct {
	Fn  string
	Sum [sha256.Size]byte
}

// shapeAt is the shape of the file at path in files, which holds the
// object id (shapes by id: index --launches walks one recipe after
// another through every version of the shared helpers).
func shapeAt(shapes *lru.Cache[string, *codeShape], files fs.FS, path, id string) (*codeShape, bool) {
	if sh, ok := shapes.Get(id); ok {
		return sh, true
	}
	data, ok, err := revfs.ReadFile(files, path)
	if err != nil || !ok {
		return nil, false
	}
	sh := shapeOf(data)
	shapes.Put(id, sh)
	return sh, true
}

// shape is the shape of a shell file's content (parsed here when the
// runs did not parse it).
func (c *Cache) shape(data []byte) *codeShape {
	sum := sha256.Sum256(data)
	if sh, ok := c.shapes.Get(sum); ok {
		return sh
	}
	sh := shapeOf(data)
	c.shapes.Put(sum, sh)
	return sh
}

// digest identifies a shape (the digest of its parts).
func (sh *codeShape) digest() [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%v %v %v %d\n", sh.OK, sh.Global, sh.Empty, len(sh.Spans))
	for _, sp := range sh.Spans {
		h.Write([]byte(sp.Fn + "\x00"))
		h.Write(sp.Sum[:])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// shapeOf parses a shell file into its shape.
func shapeOf(data []byte) *codeShape {
	f, src, err := parseBash(data, "")
	return shapeFrom(f, err, src)
}

// shapeFrom is the shape of data, parsed as f: data is the text parsed
// (parseBash's src), whose offsets f's positions are.
func shapeFrom(f *syntax.File, err error, data []byte) *codeShape {
	sh := &codeShape{Empty: len(data) == 0}
	if err == nil {
		sh.OK = true
		syntax.Walk(f, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.ParamExp:
				if n.Param == nil {
					break
				}
				switch n.Param.Value {
				case "LINENO":
					sh.OK = false
				case "BASH_LINENO":
					sh.Global = true
				}
			case *syntax.DeclClause:
				// declare -f / -F and export -f name or list functions
				for _, a := range n.Args {
					if a.Naked && a.Name == nil && a.Value != nil {
						if l := a.Value.Lit(); strings.HasPrefix(l, "-") && strings.ContainsAny(l, "fF") {
							sh.Global = true
						}
					}
				}
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					switch n.Args[0].Lit() {
					case "caller", "compgen":
						sh.Global = true
					}
				}
			}
			return true
		})
		for i, st := range f.Stmts {
			off, end := int(st.Pos().Offset()), len(data)
			if i+1 < len(f.Stmts) {
				end = int(f.Stmts[i+1].Pos().Offset())
			}
			sp := codeSpan{Sum: sha256.Sum256(data[off:end])}
			if fd, ok := st.Cmd.(*syntax.FuncDecl); ok && fd.Name != nil && len(st.Redirs) == 0 && !st.Background && !st.Negated {
				sp.Fn = fd.Name.Value
			}
			sh.Spans = append(sh.Spans, sp)
		}
	}
	return sh
}

// sig is the file's code signature for a run that called the names in
// called ("" when the file cannot be signed).
func (sh *codeShape) sig(called map[string]bool) string {
	if !sh.OK || sh.Global {
		return ""
	}
	h := sha256.New()
	if sh.Empty {
		h.Write([]byte("empty"))
	}
	for _, sp := range sh.Spans {
		if sp.Fn != "" && !called[sp.Fn] {
			continue
		}
		h.Write(sp.Sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
