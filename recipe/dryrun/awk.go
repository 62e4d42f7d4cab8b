package dryrun

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/parser"
)

// awkTimeout bounds one awk program (a BEGIN loop that never ends).
const awkTimeout = time.Second

// awkProgram runs awk on what the script gives it, with GoAWK confined:
// no system() or pipes, no file read or written (input is stdin only),
// ENVIRON the script's exported variables, a deadline. It reads -F FS,
// -v NAME=VALUE, the program, and NAME=VALUE operands; ok is false for
// what it does not run (a file operand, -f, another option, a program
// GoAWK does not parse): awk is then stubbed and its output unknown.
// status is awk's exit status.
func awkProgram(ctx context.Context, args []string, in []byte, environ []string) (out []byte, status int, ok bool) {
	var vars []string
	var assigns []string
	prog, havePrg := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case havePrg:
			if name, _, isSet := strings.Cut(a, "="); !isSet || !isVarName(name) {
				return nil, 0, false // a file operand
			}
			assigns = append(assigns, a)
		case a == "-F" && i+1 < len(args):
			i++
			vars = append(vars, "FS", args[i])
		case strings.HasPrefix(a, "-F") && len(a) > 2:
			vars = append(vars, "FS", a[2:])
		case a == "-v" && i+1 < len(args), strings.HasPrefix(a, "-v") && len(a) > 2:
			v := strings.TrimPrefix(a, "-v")
			if v == "" {
				i++
				v = args[i]
			}
			name, value, isSet := strings.Cut(v, "=")
			if !isSet || !isVarName(name) {
				return nil, 0, false
			}
			vars = append(vars, name, value)
		case a == "--":
		case strings.HasPrefix(a, "-"):
			return nil, 0, false // -f FILE, and options of other awks
		default:
			prog, havePrg = a, true
		}
	}
	if !havePrg {
		return nil, 0, false
	}
	p, err := parser.ParseProgram([]byte(prog), nil)
	if err != nil {
		return nil, 0, false
	}
	it, err := interp.New(p)
	if err != nil {
		return nil, 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, awkTimeout)
	defer cancel()
	stdout, stderr := &capped{max: 4 << 20}, &capped{max: 64 << 10}
	status, err = it.ExecuteContext(ctx, &interp.Config{
		Stdin: bytes.NewReader(in), Output: stdout, Error: stderr, Argv0: "awk",
		Args: assigns, Vars: vars, Environ: append([]string{}, environ...),
		NoExec: true, NoFileWrites: true, NoFileReads: true,
	})
	if err != nil {
		return nil, 0, false // a deadline, a runtime error awk would print: not known
	}
	return stdout.Bytes(), status, true
}

// capped is a buffer that refuses to grow past max: a program printing
// without end stops with an error.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(b []byte) (int, error) {
	if c.Len()+len(b) > c.max {
		return 0, errTooMuchOutput
	}
	return c.Buffer.Write(b)
}

var errTooMuchOutput = errors.New("awk: output past its bound")
