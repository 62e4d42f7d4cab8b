// Package iostreams holds perflog's standard streams and every terminal
// decision (is stdout a TTY, colour), so that commands print through one
// place and tests can swap in buffers (Test) and force TTY behaviour.
//
// Dependencies: golang.org/x/term.
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
	colorForced                bool
	width                      int // set by SetTerminalWidth
}

// System returns the process's streams.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.SetColorFromEnv(os.Getenv)
	return s
}

// SetColorFromEnv applies the conventions of the environment: NO_COLOR (set
// to anything but "") and TERM=dumb turn colour off; CLICOLOR_FORCE (set
// to anything but "" or "0") turns it on even off a terminal, unless
// NO_COLOR is set (https://no-color.org, https://bixense.com/clicolors).
func (s *IOStreams) SetColorFromEnv(getenv func(string) string) {
	s.colorDisabled = getenv("NO_COLOR") != "" || getenv("TERM") == "dumb"
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" && getenv("NO_COLOR") == "" {
		s.colorForced = true
	}
}

// SetColor sets colour as --color says: "always", "never" or "auto" (the
// environment's and the terminal's choice). It reports a bad value.
func (s *IOStreams) SetColor(mode string) bool {
	switch mode {
	case "always":
		s.colorForced, s.colorDisabled = true, false
	case "never":
		s.colorForced, s.colorDisabled = false, true
	case "auto", "":
	default:
		return false
	}
	return true
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

// ColorEnabled reports whether output to stdout may use ANSI colour: on a
// TTY unless the environment or --color says otherwise, or when forced.
func (s *IOStreams) ColorEnabled() bool {
	return s.colorForced || (!s.colorDisabled && s.IsStdoutTTY())
}

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
