// Package layout_test holds the test of the module's package layout.
package layout_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/perflog/perflog/"

// layers, lowest first: a package may import its own layer's parent (a
// layer's sub-packages) and the layers below it, never one above. The
// parity helpers and plumbing under internal/ import no layer (the tests'
// corpus opener aside).
var layers = [][]string{
	{"internal/"},
	{"gitscan/internal/"},
	{"gitscan"},
	{"config"},
	{"recipe/revfs"},
	{"recipe/lint"},
	{"recipe/dryrun"},
	{"recipe"},
	{"changelog/claims"},
	{"changelog"},
	{"changelog/draft", "changelog/load"},
	{"provenance"},
	{"provenance/index"},
	{"report"},
	{"cmd/"},
}

// onlyInCmd are the libraries of the command line, wired in cmd/perflog alone.
var onlyInCmd = []string{"github.com/spf13/cobra", "github.com/olekukonko/tablewriter", "github.com/google/go-github"}

func layerOf(pkg string) int {
	best, n := -1, 0
	for i, l := range layers {
		for _, p := range l {
			if (pkg == strings.TrimSuffix(p, "/") || strings.HasPrefix(pkg, p)) && len(p) > n {
				best, n = i, len(p)
			}
		}
	}
	return best
}

// TestImportsPointDown: cmd → provenance/index → provenance → changelog →
// changelog/claims → recipe → config → gitscan → gitscan/internal/pack → internal, by `go list` of every package.
func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], module)
		if !ok || strings.HasPrefix(pkg, "bench/") {
			continue
		}
		from := layerOf(pkg)
		if from < 0 {
			t.Errorf("%s is in no layer: add it to layers", pkg)
			continue
		}
		checked++
		for _, imp := range f[1:] {
			for _, lib := range onlyInCmd {
				if strings.HasPrefix(imp, lib) && from != len(layers)-1 {
					t.Errorf("%s imports %s, which only cmd/perflog may", pkg, imp)
				}
			}
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			to := layerOf(dep)
			switch {
			case pkg == "internal/testcorpus" && dep == "gitscan": // tests' helper
			case to > from:
				t.Errorf("%s imports %s, a layer above it", pkg, dep)
			case to == from && from != 0:
				t.Errorf("%s imports %s, a package of its own layer", pkg, dep)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked: the test tests nothing", checked)
	}
}

// TestPackageDocsNameTheirDependencies: each package's doc says what it
// depends on, in a sentence that starts "Dependencies:" and lists the
// module's packages it imports (by path in the module: config,
// internal/pyyaml) and the other modules (by path: gopkg.in/yaml.v3),
// or "the standard library only"; a list that names an import the
// package does not have, or misses one it has, fails as a back-edge does.
func TestPackageDocsNameTheirDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Doc}}|{{join .Imports \",\"}}|{{range .GoFiles}}{{$.Dir}}/{{.}},{{end}}", "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 4)
		pkg, ok := strings.CutPrefix(f[0], module)
		if !ok || strings.HasPrefix(pkg, "bench/") || pkg == "cmd/perflog" {
			continue // a command's imports are its wiring
		}
		doc := packageDoc(t, strings.Split(strings.TrimSuffix(f[3], ","), ","))
		listed, ok := dependenciesOf(doc)
		if !ok {
			t.Errorf("%s: the package doc has no \"Dependencies:\" sentence", pkg)
			continue
		}
		checked++
		have := map[string]bool{}
		for _, imp := range strings.Split(f[2], ",") {
			switch dep, own := strings.CutPrefix(imp, module); {
			case imp == "":
			case own:
				have[dep] = true
			case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
				have[imp] = true // another module's package
			}
		}
		for name := range have {
			found := listed[name]
			for l := range listed {
				found = found || strings.HasPrefix(name, l+"/")
			}
			if !found {
				t.Errorf("%s imports %s, which its doc's Dependencies do not name", pkg, name)
			}
		}
		for l := range listed {
			used := have[l]
			for name := range have {
				used = used || strings.HasPrefix(name, l+"/")
			}
			if !used {
				t.Errorf("%s: its doc's Dependencies name %s, which it does not import", pkg, l)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d package docs checked", checked)
	}
}

// packageDoc is the whole package comment of the files (go list's Doc is
// its first sentence).
func packageDoc(t *testing.T, files []string) string {
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		i := strings.Index(src, "\npackage ")
		if strings.HasPrefix(src, "package ") {
			continue
		}
		if i < 0 {
			continue
		}
		lines := strings.Split(src[:i], "\n")
		var doc []string
		for j := len(lines) - 1; j >= 0 && strings.HasPrefix(lines[j], "//"); j-- {
			doc = append([]string{strings.TrimSpace(strings.TrimPrefix(lines[j], "//"))}, doc...)
		}
		if len(doc) > 0 && strings.HasPrefix(doc[0], "Package ") {
			return strings.Join(doc, " ")
		}
	}
	return ""
}

// dependenciesOf reads a doc's "Dependencies: a, b (why), c; ..."
// sentence: the names before the first ';' or the sentence's end.
func dependenciesOf(doc string) (map[string]bool, bool) {
	_, rest, ok := strings.Cut(doc, "Dependencies:")
	if !ok {
		return nil, false
	}
	if i := strings.IndexAny(rest, ";"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.Index(rest, ". "); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ".")
	// (why a dependency is there, in parentheses, is not a name)
	for {
		i := strings.Index(rest, "(")
		j := strings.Index(rest, ")")
		if i < 0 || j < i {
			break
		}
		rest = rest[:i] + rest[j+1:]
	}
	out := map[string]bool{}
	if strings.Contains(rest, "standard library only") {
		return out, true
	}
	for _, n := range strings.Split(rest, ",") {
		n = strings.TrimSpace(n)
		if i := strings.Index(n, " ("); i >= 0 {
			n = n[:i]
		}
		n = strings.TrimPrefix(n, "and ")
		if n != "" {
			out[n] = true
		}
	}
	return out, true
}
