package claims

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// A switch is a server feature a bullet names in English ("EPLB",
// "torch.compile", "CUDA graphs", "prefix caching"), which the
// repository's launches turn on or off with options: on is the option
// that turns it on ("--enable-torch-compile"), off the one that turns it
// off ("--disable-cuda-graph", "--no-enable-prefix-caching"). Either may
// be missing. The forms come from the options the repository's scripts
// pass at that revision, not from a list of features.
type switchForms struct {
	on, off string
}

// switchOf finds the options that switch the feature named by words
// ("cuda graphs"), or nil when the scripts pass none.
func switchOf(words []string, options func(string) bool) *switchForms {
	base := strings.ToLower(strings.Join(words, "-"))
	bases := []string{base}
	if strings.HasSuffix(base, "s") && len(words[len(words)-1]) > 3 {
		bases = append(bases, strings.TrimSuffix(base, "s")) // CUDA graphs: --disable-cuda-graph
	}
	for _, b := range bases {
		if configWords[b] || strings.HasPrefix(b, "no-") || strings.HasPrefix(b, "enable-") || strings.HasPrefix(b, "disable-") {
			continue
		}
		var f switchForms
		if options("enable-" + b) {
			f.on = "--enable-" + b
		}
		if options("disable-" + b) {
			f.off = "--disable-" + b
		} else if options("no-enable-" + b) {
			f.off = "--no-enable-" + b
		}
		if f.on != "" || f.off != "" {
			return &f
		}
	}
	return nil
}

// reSwitchNoun: a noun after a feature's name makes the name a modifier
// ("CUDA graph capture sizes", "expert-parallel settings"), and a number
// makes it a setting with a value ("chunked-prefill 8192"): no switch.
var reSwitchNoun = regexp.MustCompile(`(?i)^(?:[ -](?:capture|memory|profiler|sizes?|max|limit|mode|config\w*|batch\w*|backends?|ratio|settings?|params?|parameters|flags?|options?|knobs?|budget|kernels?|warmup|path|bs)\b|[ =:]*\d)`)

// rePostOn: a feature said to be on after its name ("with prefix caching
// enabled").
var rePostOn = regexp.MustCompile(`(?i)^[\s` + "`" + `'"]*(?:is\s+|are\s+|stays\s+|remains\s+)?(?:enabled|turned on|switched on)\b`)

// reSwitchWord is a word of a feature's name ("torch", "compile",
// "CUDA", "graphs"); words are joined by one space, "-" or ".".
var reSwitchWord = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)

// switchTokens reads the features the text names in English (masked is
// the text with what other readers took blanked; taken says whether a
// span overlaps a token read already). The longest name wins; a name of
// one word counts only written in capitals ("EPLB", "TBO"), so that
// plain words ("logging", "metrics") stay prose.
func switchTokens(t, masked string, options func(string) bool, taken func(start, end int) bool) []ctoken {
	if options == nil {
		return nil
	}
	ws := reSwitchWord.FindAllStringIndex(masked, -1)
	var out []ctoken
	for i := 0; i < len(ws); {
		n := 0
		var f *switchForms
		for l := min(4, len(ws)-i); l >= 1 && f == nil; l-- {
			ok := true
			words := make([]string, 0, l)
			for j := i; j < i+l; j++ {
				if j > i {
					sep := masked[ws[j-1][1]:ws[j][0]]
					if sep != " " && sep != "-" && sep != "." {
						ok = false
						break
					}
				}
				words = append(words, masked[ws[j][0]:ws[j][1]])
			}
			start, end := ws[i][0], ws[i+l-1][1]
			if !ok || taken(start, end) || inCompound(masked, start, end) || reSwitchNoun.MatchString(masked[end:]) {
				continue
			}
			if l == 1 && (len(words[0]) < 3 || strings.IndexFunc(words[0], unicode.IsLower) >= 0) {
				continue
			}
			if f = switchOf(words, options); f != nil {
				n = l
			}
		}
		if f == nil {
			i++
			continue
		}
		start, end := ws[i][0], ws[i+n-1][1]
		name := "--" + strings.ToLower(strings.NewReplacer(" ", "-", ".", "-").Replace(t[start:end]))
		out = append(out, ctoken{start, end, Claim{Kind: KindFlag, Text: t[start:end], Name: name, Strong: true, feature: f}})
		i += n
	}
	return out
}

// inCompound says whether masked[start:end] is part of a longer
// hyphenated or dotted word ("flashinfer-autotune" in
// "no-enable-flashinfer-autotune"), whose whole is the name.
func inCompound(masked string, start, end int) bool {
	joined := func(sep byte, word byte) bool {
		return (sep == '-' || sep == '.' || sep == '_') && (unicode.IsLetter(rune(word)) || unicode.IsDigit(rune(word)))
	}
	if start >= 2 && joined(masked[start-1], masked[start-2]) {
		return true
	}
	return end+1 < len(masked) && joined(masked[end], masked[end+1])
}

// switchTo gives a feature claim the option it is about: the claim that
// the feature is on (off when negated) becomes "the off option is not
// launched" when the scripts have one (the feature is then on by
// default), else "the on option is launched"; and the other way round.
func switchTo(c *Claim) {
	on, f := !c.Negated, c.feature
	switch {
	case f.off != "":
		c.Name, c.Negated = f.off, on
	default:
		c.Name, c.Negated = f.on, !on
	}
}

// launchedSwitch checks a claim that an option is launched (not, when
// negated) against every point of the listed recipes, as a reviewer
// reads "enable EPLB" or "radix cache disabled": all points must agree.
// strict: absence contradicts even when no file of the recipes passes the
// option (an option the engine has no other way to spell). ok is false
// without a complete dry run.
func (s *subject) launchedSwitch(r *Result, flag string, want, strict bool) (ok bool) {
	if len(s.points) == 0 {
		return false
	}
	c := Claim{Kind: KindFlag, Name: flag}
	var with, without *launchedPoint
	n := 0
	for i := range s.points {
		lp := &s.points[i]
		if _, _, found := lp.valueOf(&c); found {
			n++
			if with == nil {
				with = lp
			}
		} else if without == nil {
			without = lp
		}
	}
	total := len(s.points)
	launch := "launch"
	if n == 1 {
		launch = "launches"
	}
	switch {
	case want && n == total:
		r.set(Confirmed, fmt.Sprintf("%s is launched at all %s", flag, s.pointCount()), s.launchEvidence(with.servers[0]))
	case !want && n == 0:
		r.set(Confirmed, fmt.Sprintf("none of the %s launches %s", s.pointCount(), flag), s.launchEvidence(without.servers[0]))
	case n > 0 && n < total && want:
		r.set(Unverified, fmt.Sprintf("%d of %d points %s %s; %s point %s does not", n, total, launch, flag, without.key, without.pt.Label()), s.launchEvidence(without.servers[0]))
	case n > 0 && n < total:
		r.set(Unverified, fmt.Sprintf("%d of %d points %s %s (%s point %s)", n, total, launch, flag, with.key, with.pt.Label()), s.launchEvidence(with.servers[0]))
	case !want:
		r.set(Contradicted, fmt.Sprintf("every point launches %s (%s point %s among them)", flag, with.key, with.pt.Label()), s.launchEvidence(with.servers[0]))
	default: // wanted, launched nowhere
		reason := fmt.Sprintf("none of the %s launches %s", s.pointCount(), flag)
		if r.feature != nil {
			if other := r.feature.on; other != "" && other != flag {
				if lp := s.pointLaunching(other); lp != nil {
					r.set(Contradicted, fmt.Sprintf("%s; %s point %s launches %s", reason, lp.key, lp.pt.Label(), other), s.launchEvidence(lp.servers[0]))
					return true
				}
			}
		}
		occ := flagOccurrences(s.head.sources, flag, "head", false)
		if len(occ) == 0 {
			occ = flagOccurrences(s.base.sources, flag, "base", false)
		}
		program := without.servers[0].Program()
		if !strict && len(occ) == 0 && s.ch.Head.SpelledBy(strings.TrimPrefix(flag, "--"), program) {
			strict = true // the engine is switched so by other scripts of the repository
			reason += " (other scripts that start " + program + " pass it)"
		}
		if !strict && len(occ) == 0 {
			r.set(Unverified, fmt.Sprintf("%s, and no file that runs them passes it: %s may be switched another way there", reason, r.Text), s.launchEvidence(without.servers[0]))
			return true
		}
		ev := []Evidence{s.launchEvidence(without.servers[0])}
		if len(occ) > 0 {
			reason += fmt.Sprintf(" (%s:%d has it, but it does not reach the server's command line)", occ[0].File, occ[0].Line)
			ev = append(ev, occ[0].Evidence)
		}
		r.set(Contradicted, reason, ev...)
	}
	return true
}

// pointLaunching is the first point that launches flag, or nil.
func (s *subject) pointLaunching(flag string) *launchedPoint {
	c := Claim{Kind: KindFlag, Name: flag}
	for i := range s.points {
		if _, _, found := s.points[i].valueOf(&c); found {
			return &s.points[i]
		}
	}
	return nil
}

// checkSwitch checks a feature named in English (see switchTokens)
// against the launches, or, without them, against the files.
func (s *subject) checkSwitch(r *Result) {
	if s.launchedSwitch(r, r.Name, !r.Negated, false) {
		return
	}
	occ := flagOccurrences(s.head.sources, r.Name, "head", false)
	switch {
	case r.Negated && len(occ) == 0:
		r.set(Confirmed, r.Name+" is passed by none of the files that run the recipes")
	case r.Negated:
		r.set(Unverified, r.Name+" is still passed in some files", occ[0].Evidence)
	case len(occ) > 0:
		r.set(Confirmed, r.Name+" is passed", occ[0].Evidence)
	default:
		r.set(Unverified, fmt.Sprintf("%s is passed by none of the files that run the listed recipes, which were not dry-run: %s may be switched another way there", r.Name, r.Text))
	}
}
