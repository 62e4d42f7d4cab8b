// Package layout_test holds the test of the module's package layout.
package layout_test

import (
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
	{"recipe/dryrun"},
	{"recipe"},
	{"changelog/claims"},
	{"changelog"},
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
