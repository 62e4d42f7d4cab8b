// Package recipe knows the benchmark scripts that run recipes: which
// script runs which recipe at a revision (with config's rules), what a
// script does (flags, environment, arrays; parsed with mvdan.cc/sh), and
// the recipe-script lint.
//
// Dependencies: config, gitscan, pyyaml, mvdan.cc/sh/v3. The changelog
// package uses it for verify's coverage, claims and lint rules.
package recipe

import (
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// NewResolver builds the key → script resolver of a revision: the
// runner labels (configs/runners.yaml) and the launchers (runners/).
func NewResolver(t *gitscan.Tree, s *config.Settings) (*config.Resolver, error) {
	var runners []byte
	for _, p := range s.RunnersCandidates() {
		d, ok, err := t.Read(p)
		if err != nil {
			return nil, err
		}
		if ok {
			runners = d
			break
		}
	}
	launchers, err := t.List("runners")
	if err != nil {
		return nil, err
	}
	return config.NewResolver(s, runners, launchers, t.Exists)
}
