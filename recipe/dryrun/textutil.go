package dryrun

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// The text utilities a script pipes its own values through, as in
// `$(printf '%s\n' "${SIZES[@]}" | sort -n -u | paste -sd, -)`, run
// exactly: their output is determined by the script. Each handles the
// options scripts use and says it cannot (ok false) otherwise; the
// program is then stubbed, and what it prints is unknown, as before. An
// input that holds an unknown value gives an unknown output.

// textTools are the programs textTool runs.
var textTools = map[string]bool{"sort": true, "uniq": true, "paste": true, "tr": true, "cut": true,
	"head": true, "tail": true, "seq": true, "wc": true, "sed": true}

// awks are the names awk goes by.
var awks = map[string]bool{"awk": true, "gawk": true, "mawk": true}

// textProgram runs a text program on the input a script gives it (text
// utilities, grep, awk): its output and exit status; ok is false when the
// input or an argument holds an unknown value, or for a use it does not
// know (the program is then stubbed).
func textProgram(ctx context.Context, env expand.Environ, name string, args []string, in []byte) (out []byte, status int, ok bool) {
	if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, UnknownMarker) }) {
		return nil, 0, false // an unknown separator, set or count makes the output unknown too
	}
	if bytes.Contains(in, []byte(UnknownMarker)) && !aroundUnknowns(name, args) {
		return nil, 0, false // what it does to an unknown value is unknown
	}
	switch {
	case awks[name]:
		var environ []string
		exported(env, func(name, value string) { environ = append(environ, name, value) })
		return awkProgram(ctx, args, in, environ)
	case name == "grep":
		return grepText(args, in)
	}
	out, ok = textTool(name, args, in)
	return out, 0, ok
}

// aroundUnknowns says whether a text program leaves the unknown values
// of its input whole, as words among others: it only takes lines (head,
// tail), joins them (paste -s -d with a delimiter of punctuation), or
// swaps a punctuation or space character for another (tr ' ' ',',
// sed 's/ /,/g'), none of which can touch "<unknown:name>". The list
// of node addresses a job writes ($(echo "${IPS[*]}" | sed 's/ /,/g'))
// then keeps one unknown address a node, not one unknown list.
func aroundUnknowns(name string, args []string) bool {
	plain := func(s string) bool {
		for _, c := range s {
			if c == '<' || c == '>' || c == ':' || c == '_' || c == '\\' || c == '[' || c == ']' || c == '.' || c == '*' || c == '^' || c == '$' ||
				(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	switch name {
	case "head", "tail":
		_, ok := countArg(args)
		return ok
	case "paste":
		for _, a := range args {
			if d, ok := strings.CutPrefix(a, "-sd"); ok && plain(d) {
				continue
			}
			if a == "-s" || a == "-" || (strings.HasPrefix(a, "-d") && plain(a[2:])) {
				continue
			}
			return false
		}
		return true
	case "tr":
		return len(args) == 2 && plain(args[0]) && plain(args[1]) && len(args[0]) == len(args[1])
	case "sed":
		if len(args) != 1 || !strings.HasPrefix(args[0], "s") || len(args[0]) < 4 {
			return false
		}
		parts := strings.Split(args[0][2:], args[0][1:2])
		return len(parts) == 3 && parts[0] != "" && plain(parts[0]) && plain(parts[1]) && (parts[2] == "" || parts[2] == "g")
	}
	return false
}

// textTool runs a text utility on known input (textProgram checks it);
// ok is false for a use it does not know (an option, a file operand).
func textTool(name string, args []string, in []byte) (out []byte, ok bool) {
	lines := splitLines(in)
	switch name {
	case "sort":
		return sortLines(args, lines)
	case "uniq":
		if len(args) > 0 {
			return nil, false
		}
		var outLines []string
		for i, l := range lines {
			if i == 0 || l != lines[i-1] {
				outLines = append(outLines, l)
			}
		}
		return joinLines(outLines), true
	case "paste":
		return paste(args, lines)
	case "tr":
		return trChars(args, in)
	case "cut":
		return cutFields(args, lines)
	case "head", "tail":
		n, ok := countArg(args)
		if !ok {
			return nil, false
		}
		if name == "head" {
			return joinLines(lines[:min(n, len(lines))]), true
		}
		return joinLines(lines[max(0, len(lines)-n):]), true
	case "seq":
		return seq(args)
	case "sed":
		return sedScript(args, in)
	case "wc":
		if len(args) != 1 || args[0] != "-l" {
			return nil, false
		}
		return []byte(strconv.Itoa(bytes.Count(in, []byte("\n"))) + "\n"), true
	}
	return nil, false
}

// splitLines splits text into lines, a final line without a newline
// included.
func splitLines(in []byte) []string {
	if len(in) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(in), "\n"), "\n")
}

func joinLines(ls []string) []byte {
	if len(ls) == 0 {
		return nil
	}
	return []byte(strings.Join(ls, "\n") + "\n")
}

// sortLines is sort with -n, -r, -u (alone or bundled, "-nu").
func sortLines(args []string, lines []string) ([]byte, bool) {
	var numeric, reverse, unique bool
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			return nil, false
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				numeric = true
			case 'r':
				reverse = true
			case 'u':
				unique = true
			default:
				return nil, false
			}
		}
	}
	num := func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil
	}
	if numeric {
		for _, l := range lines {
			if _, ok := num(l); !ok {
				return nil, false // GNU sort's leading-number rules: not copied
			}
		}
	} else {
		for _, l := range lines {
			for i := 0; i < len(l); i++ {
				if l[i] >= 0x80 || (l[i] < '0' || l[i] > '9') && l[i] != '.' && l[i] != ',' && l[i] != '-' {
					return nil, false // the locale's collation orders letters: not copied
				}
			}
		}
	}
	cmp := func(a, b string) int {
		if numeric {
			x, _ := num(a)
			y, _ := num(b)
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
		return strings.Compare(a, b)
	}
	out := slices.Clone(lines)
	slices.SortStableFunc(out, cmp)
	if unique {
		out = slices.CompactFunc(out, func(a, b string) bool { return cmp(a, b) == 0 })
	}
	if reverse {
		slices.Reverse(out)
	}
	return joinLines(out), true
}

// paste is paste -s [-d LIST] [-] over standard input.
func paste(args []string, lines []string) ([]byte, bool) {
	serial, delim := false, "\t"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-":
		case a == "-s":
			serial = true
		case a == "-d" && i+1 < len(args):
			delim = args[i+1]
			i++
		case strings.HasPrefix(a, "-sd"):
			serial, delim = true, a[3:]
		case strings.HasPrefix(a, "-d"):
			delim = a[2:]
		default:
			return nil, false
		}
	}
	if !serial || len([]rune(delim)) != 1 {
		return nil, false
	}
	return []byte(strings.Join(lines, delim) + "\n"), true
}

// trChars is tr SET1 SET2 and tr -d SET, of single characters (no
// ranges or classes).
func trChars(args []string, in []byte) ([]byte, bool) {
	args = slices.Clone(args)
	for i, a := range args {
		// the escapes tr reads in a set: \n, \t, \\
		args[i] = strings.NewReplacer(`\\`, "\x00", `\n`, "\n", `\t`, "\t").Replace(a)
		args[i] = strings.ReplaceAll(args[i], "\x00", `\`)
	}
	plain := func(s string) bool { return s != "" && !strings.ContainsAny(s, `\[-`) }
	switch {
	case len(args) == 2 && args[0] == "-d" && plain(args[1]):
		return []byte(strings.Map(func(r rune) rune {
			if strings.ContainsRune(args[1], r) {
				return -1
			}
			return r
		}, string(in))), true
	case len(args) == 2 && plain(args[0]) && plain(args[1]) && len([]rune(args[0])) == len([]rune(args[1])):
		from, to := []rune(args[0]), []rune(args[1])
		return []byte(strings.Map(func(r rune) rune {
			if i := slices.Index(from, r); i >= 0 {
				return to[i]
			}
			return r
		}, string(in))), true
	}
	return nil, false
}

// cutFields is cut -d X -f N[,M...] over standard input.
func cutFields(args []string, lines []string) ([]byte, bool) {
	delim, fields := "\t", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d" && i+1 < len(args):
			delim = args[i+1]
			i++
		case strings.HasPrefix(a, "-d"):
			delim = a[2:]
		case a == "-f" && i+1 < len(args):
			fields = args[i+1]
			i++
		case strings.HasPrefix(a, "-f"):
			fields = a[2:]
		default:
			return nil, false
		}
	}
	if len([]rune(delim)) != 1 || fields == "" {
		return nil, false
	}
	var want []int
	for _, f := range strings.Split(fields, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, false
		}
		want = append(want, n)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		parts := strings.Split(l, delim)
		if len(parts) == 1 {
			out = append(out, l) // no delimiter: the line as it is
			continue
		}
		var picked []string
		for _, n := range want {
			if n <= len(parts) {
				picked = append(picked, parts[n-1])
			}
		}
		out = append(out, strings.Join(picked, delim))
	}
	return joinLines(out), true
}

// countArg reads head's and tail's -n N, -nN or -N (default 10); any
// other argument (a file, -f) is not for textTool.
func countArg(args []string) (int, bool) {
	n := 10
	for i := 0; i < len(args); i++ {
		a := args[i]
		var v string
		switch {
		case a == "-n" && i+1 < len(args):
			v = args[i+1]
			i++
		case strings.HasPrefix(a, "-n"):
			v = a[2:]
		case len(a) > 1 && a[0] == '-':
			v = a[1:]
		default:
			return 0, false
		}
		k, err := strconv.Atoi(v)
		if err != nil || k < 0 {
			return 0, false
		}
		n = k
	}
	return n, true
}

// seq is seq LAST, seq FIRST LAST and seq FIRST STEP LAST, of integers.
func seq(args []string) ([]byte, bool) {
	nums := make([]int, 0, 3)
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil {
			return nil, false
		}
		nums = append(nums, n)
	}
	first, step, last := 1, 1, 0
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, step, last = nums[0], nums[1], nums[2]
	default:
		return nil, false
	}
	if step == 0 || (last-first)/step > 100000 {
		return nil, false
	}
	var b strings.Builder
	for i := first; (step > 0 && i <= last) || (step < 0 && i >= last); i += step {
		fmt.Fprintln(&b, i)
	}
	return []byte(b.String()), true
}
