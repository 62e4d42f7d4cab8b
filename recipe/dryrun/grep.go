package dryrun

import (
	"regexp"
	"strconv"
	"strings"
)

// grepText runs grep on known input, as scripts use it in pipes and
// tests (`... | grep -q '[0-9]'`, `grep -c`, `grep -o`): one or more
// patterns (-e, or the first operand), POSIX basic unless -E, and -F, -i,
// -v, -x, -w, -q, -c, -o, -s; input from stdin only. status is grep's: 0
// when a line was selected, 1 when none. ok is false for what it does not
// run (a file operand, another option, a pattern it cannot translate):
// grep is then stubbed.
func grepText(args []string, in []byte) (out []byte, status int, ok bool) {
	var pats []string
	ere, fixed, icase, invert, whole, word, quiet, count, only := false, false, false, false, false, false, false, false, false
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" && i+1 < len(args):
			i++
			pats = append(pats, args[i])
		case a == "--":
			operands = len(args) - i - 1
			if len(pats) == 0 && operands > 0 {
				pats, operands = append(pats, args[i+1]), operands-1
			}
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			for _, f := range a[1:] {
				switch f {
				case 'E':
					ere = true
				case 'F':
					fixed = true
				case 'i':
					icase = true
				case 'v':
					invert = true
				case 'x':
					whole = true
				case 'w':
					word = true
				case 'q':
					quiet = true
				case 'c':
					count = true
				case 'o':
					only = true
				case 's':
				default:
					return nil, 0, false
				}
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, 0, false // a long option
		case len(pats) == 0:
			pats = append(pats, a)
		default:
			operands++
		}
	}
	if len(pats) == 0 || operands > 0 || (only && (invert || count)) {
		return nil, 0, false
	}
	var alts []string
	for _, p := range pats {
		for _, q := range strings.Split(p, "\n") {
			switch {
			case fixed:
				q = regexp.QuoteMeta(q)
			case !ere:
				var ok bool
				if q, ok = breToRE2(q); !ok {
					return nil, 0, false
				}
			}
			alts = append(alts, "(?:"+q+")")
		}
	}
	expr := strings.Join(alts, "|")
	switch {
	case whole:
		expr = "^(?:" + expr + ")$"
	case word:
		expr = `(?:^|\W)(` + expr + `)(?:\W|$)`
	}
	if icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, 0, false
	}
	if word && only {
		return nil, 0, false // -w -o: the word's bounds, which the wrapper above does not give
	}
	var b strings.Builder
	n := 0
	for _, line := range splitLines(in) {
		if re.MatchString(line) == invert {
			continue
		}
		n++
		switch {
		case quiet:
			return nil, 0, true
		case count:
		case only:
			for _, m := range re.FindAllString(line, -1) {
				if m != "" {
					b.WriteString(m + "\n")
				}
			}
		default:
			b.WriteString(line + "\n")
		}
	}
	if count {
		b.WriteString(strconv.Itoa(n) + "\n")
	}
	if n == 0 {
		status = 1
	}
	if quiet {
		return nil, status, true
	}
	return []byte(b.String()), status, true
}

// grepFile splits grep's arguments into its options and pattern (opts)
// and one file operand; ok is false without exactly one, or with a file
// named by an unknown value.
func grepFile(args []string) (opts []string, file string, ok bool) {
	var files []string
	pattern := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" && i+1 < len(args):
			opts = append(opts, a, args[i+1])
			pattern = true
			i++
		case a == "--":
			rest := args[i+1:]
			if !pattern && len(rest) > 0 {
				opts, rest, pattern = append(opts, "--", rest[0]), rest[1:], true
			}
			files = append(files, rest...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			opts = append(opts, a)
		case !pattern:
			opts, pattern = append(opts, a), true
		default:
			files = append(files, a)
		}
	}
	if len(files) != 1 || files[0] == "-" || strings.Contains(files[0], UnknownMarker) {
		return nil, "", false
	}
	return opts, files[0], true
}
