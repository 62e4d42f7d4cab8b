// Package iostreams holds perflog's standard streams and every terminal
// decision (is stdout a TTY, colour), so that commands print through one
// place and tests can swap in buffers (Test) and force TTY behaviour.
//
// Dependencies: golang.org/x/term only.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY, stderrTTY       bool
	stdoutTTYSet, stderrTTYSet bool
	stdinTTY, stdinTTYSet      bool
	colorDisabled              bool
	width                      int // set by SetTerminalWidth
}

// System returns the process's streams.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	_, s.colorDisabled = os.LookupEnv("NO_COLOR")
	return s
}

// Test returns streams backed by buffers, with every TTY flag off.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	s := &IOStreams{In: in, Out: out, ErrOut: errOut, stdoutTTYSet: true, stderrTTYSet: true, stdinTTYSet: true, colorDisabled: true}
	return s, in, out, errOut
}

// IsStdinTTY reports whether stdin is a terminal (or was set to be one):
// only then may a command start an interactive editor.
func (s *IOStreams) IsStdinTTY() bool {
	if s.stdinTTYSet {
		return s.stdinTTY
	}
	if f, ok := s.In.(*os.File); ok {
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}

// SetStdinTTY overrides TTY detection for stdin.
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY, s.stdinTTYSet = v, true }

func isTerminal(w io.Writer) bool {
	if f, ok := w.(*os.File); ok {
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}

// IsStdoutTTY reports whether stdout is a terminal (or was set to be one).
func (s *IOStreams) IsStdoutTTY() bool {
	if s.stdoutTTYSet {
		return s.stdoutTTY
	}
	return isTerminal(s.Out)
}

// IsStderrTTY reports whether stderr is a terminal (or was set to be one).
func (s *IOStreams) IsStderrTTY() bool {
	if s.stderrTTYSet {
		return s.stderrTTY
	}
	return isTerminal(s.ErrOut)
}

// SetStdoutTTY overrides TTY detection for stdout.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY, s.stdoutTTYSet = v, true }

// SetStderrTTY overrides TTY detection for stderr.
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY, s.stderrTTYSet = v, true }

// ColorEnabled reports whether output to stdout may use ANSI colour:
// only on a TTY and when NO_COLOR is unset.
func (s *IOStreams) ColorEnabled() bool { return !s.colorDisabled && s.IsStdoutTTY() }

// TerminalWidth is how many columns a table on stdout may take: the
// terminal's width, else $COLUMNS, else 0 (no limit: output that is not
// on a terminal is not wrapped).
func (s *IOStreams) TerminalWidth() int {
	if s.width > 0 {
		return s.width
	}
	if f, ok := s.Out.(*os.File); ok && s.IsStdoutTTY() {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return 0
}

// SetTerminalWidth overrides TerminalWidth.
func (s *IOStreams) SetTerminalWidth(w int) { s.width = w }
