package dryrun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
// not every point's dry run (cold blame of dsr1-fp8-mi355x-sglang −21 %,
// index --launches −28 %: docs/dev/performance.md).

// codeShape is a shell file cut into its top-level statements.
type codeShape struct {
	ok bool // false: the file cannot be signed (parse error, line numbers read)
	// global: the file lists or locates the shell's functions (declare -F,
	// compgen, caller, BASH_LINENO), so no file of the run can be signed
	global bool
	empty  bool
	spans  []codeSpan
}

// codeSpan is one top-level statement from its start to the next one's:
// fn is the function it declares ("" for any other statement), sum the
// digest of its text.
type codeSpan struct {
	fn  string
	sum [sha256.Size]byte
}

// Shapes by object id, and by content for a file sourceable parsed
// already. A shape is a few KB; index --launches walks one recipe after
// another through every version of the shared helpers, which 64 shapes by
// id did not hold (parsing them again was 4 % of its CPU).
var (
	shapes          = lru.New[string, *codeShape](1024)
	shapesByContent = lru.New[[sha256.Size]byte, *codeShape](8)
)

// shapeAt is the shape of the file at path in files, which holds the
// object id.
func shapeAt(files fs.FS, path, id string) (*codeShape, bool) {
	if sh, ok := shapes.Get(id); ok {
		return sh, true
	}
	data, ok, err := revfs.ReadFile(files, path)
	if err != nil || !ok {
		return nil, false
	}
	sh, ok := shapesByContent.Get(sha256.Sum256(data))
	if !ok {
		sh = shapeOf(data)
	}
	shapes.Put(id, sh)
	return sh, true
}

// shapeOf parses a shell file into its shape.
func shapeOf(data []byte) *codeShape {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), "")
	return shapeFrom(f, err, data)
}

// shapeFrom is the shape of data, parsed as f.
func shapeFrom(f *syntax.File, err error, data []byte) *codeShape {
	sh := &codeShape{empty: len(data) == 0}
	if err == nil {
		sh.ok = true
		syntax.Walk(f, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.ParamExp:
				if n.Param == nil {
					break
				}
				switch n.Param.Value {
				case "LINENO":
					sh.ok = false
				case "BASH_LINENO":
					sh.global = true
				}
			case *syntax.DeclClause:
				// declare -f / -F and export -f name or list functions
				for _, a := range n.Args {
					if a.Naked && a.Name == nil && a.Value != nil {
						if l := a.Value.Lit(); strings.HasPrefix(l, "-") && strings.ContainsAny(l, "fF") {
							sh.global = true
						}
					}
				}
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					switch n.Args[0].Lit() {
					case "caller", "compgen":
						sh.global = true
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
			sp := codeSpan{sum: sha256.Sum256(data[off:end])}
			if fd, ok := st.Cmd.(*syntax.FuncDecl); ok && fd.Name != nil && len(st.Redirs) == 0 && !st.Background && !st.Negated {
				sp.fn = fd.Name.Value
			}
			sh.spans = append(sh.spans, sp)
		}
	}
	return sh
}

// sig is the file's code signature for a run that called the names in
// called ("" when the file cannot be signed).
func (sh *codeShape) sig(called map[string]bool) string {
	if !sh.ok || sh.global {
		return ""
	}
	h := sha256.New()
	if sh.empty {
		h.Write([]byte("empty"))
	}
	for _, sp := range sh.spans {
		if sp.fn != "" && !called[sp.fn] {
			continue
		}
		h.Write(sp.sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
