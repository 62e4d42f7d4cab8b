package dryrun

import (
	"regexp"
	"strings"
)

// sedScript runs the substitutions scripts write on their own values,
// `$(echo "$IMAGE" | sed 's/[\/:@#]/_/g')`: one s command (any delimiter;
// flags g and p; -n, -e, -E or -r), line by line, as GNU sed does. A
// script it cannot read as that (another command, an address, several
// commands, a file operand) is ok false: sed is then stubbed and its
// output unknown.
func sedScript(args []string, in []byte) ([]byte, bool) {
	quiet, ere := false, false
	script := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-n":
			quiet = true
		case a == "-E" || a == "-r":
			ere = true
		case a == "-e" && i+1 < len(args) && script == "":
			i++
			script = args[i]
		case strings.HasPrefix(a, "-") || script != "":
			return nil, false // another option, a second script or a file
		default:
			script = a
		}
	}
	re, repl, global, print, ok := parseSubst(script, ere)
	if !ok {
		return nil, false
	}
	var out strings.Builder
	limit := 1
	if global {
		limit = -1
	}
	for _, line := range splitLines(in) {
		ms := re.FindAllStringSubmatchIndex(line, limit)
		var b strings.Builder
		prev := 0
		for _, m := range ms {
			b.WriteString(line[prev:m[0]])
			sub := make([]string, len(m)/2)
			for k := range sub {
				if m[2*k] >= 0 {
					sub[k] = line[m[2*k]:m[2*k+1]]
				}
			}
			b.WriteString(expandRepl(repl, sub))
			prev = m[1]
		}
		b.WriteString(line[prev:])
		if !quiet || (len(ms) > 0 && print) {
			out.WriteString(b.String() + "\n")
		}
	}
	return []byte(out.String()), true
}

// parseSubst reads s<d>RE<d>REPL<d>FLAGS; RE is a POSIX basic regular
// expression unless ere.
func parseSubst(script string, ere bool) (re *regexp.Regexp, repl string, global, print, ok bool) {
	script = strings.TrimSpace(script)
	if len(script) < 4 || script[0] != 's' {
		return nil, "", false, false, false
	}
	d := script[1]
	if d == '\\' || d == '\n' || d == ' ' {
		return nil, "", false, false, false
	}
	var parts []string
	var cur strings.Builder
	for i := 2; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\\' && i+1 < len(script) && script[i+1] == d:
			cur.WriteByte(d) // the delimiter, escaped
			i++
		case c == '\\' && i+1 < len(script):
			cur.WriteByte(c)
			cur.WriteByte(script[i+1])
			i++
		case c == d:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if len(parts) != 2 {
		return nil, "", false, false, false
	}
	for _, f := range cur.String() {
		switch f {
		case 'g':
			global = true
		case 'p':
			print = true
		default:
			return nil, "", false, false, false // a count, w, e, i, m...
		}
	}
	pattern := parts[0]
	if !ere {
		if pattern, ok = breToRE2(pattern); !ok {
			return nil, "", false, false, false
		}
	}
	re, err := regexp.Compile(pattern)
	if err != nil || pattern == "" {
		return nil, "", false, false, false
	}
	return re, parts[1], global, print, true
}

// breToRE2 writes a POSIX basic regular expression as RE2: \( \) \{ \}
// \+ \? \| are the operators, ( ) { } + ? | literal; a bracket expression
// is copied (its backslash literal). ok is false for what it does not
// translate (a back-reference in the pattern, a class it does not know).
func breToRE2(p string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '[':
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				if p[j] == '[' && j+1 < len(p) && (p[j+1] == ':' || p[j+1] == '.' || p[j+1] == '=') {
					end := strings.Index(p[j+2:], string(p[j+1])+"]")
					if end < 0 {
						return "", false
					}
					j += end + 4
					continue
				}
				j++
			}
			if j >= len(p) {
				return "", false
			}
			b.WriteString(strings.ReplaceAll(p[i:j+1], `\`, `\\`))
			i = j
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			i++
			switch {
			case strings.IndexByte("(){}+?|", n) >= 0:
				b.WriteByte(n)
			case n >= '1' && n <= '9':
				return "", false // a back-reference RE2 lacks
			case n == 'n':
				b.WriteString(`\n`)
			case n == 't':
				b.WriteString(`\t`)
			default:
				b.WriteString(regexp.QuoteMeta(string(n)))
			}
		case strings.IndexByte("(){}+?|", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '*' && (i == 0 || strings.HasSuffix(b.String(), "(") || strings.HasSuffix(b.String(), "^")):
			b.WriteString(`\*`) // a star that repeats nothing is literal
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// expandRepl writes sed's replacement for a match: & is the match, \1 to
// \9 its groups, \n a newline, \c the character c.
func expandRepl(repl string, sub []string) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '&':
			b.WriteString(sub[0])
		case c == '\\' && i+1 < len(repl):
			n := repl[i+1]
			i++
			switch {
			case n >= '0' && n <= '9':
				if k := int(n - '0'); k < len(sub) {
					b.WriteString(sub[k])
				}
			case n == 'n':
				b.WriteByte('\n')
			case n == 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(n)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
