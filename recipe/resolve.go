// Package recipe knows the recipes of a revision and the benchmark
// scripts that run them: a revision's files and recipes read as far as
// asked (Rev), which script runs which recipe (with config's rules), the
// points a recipe runs, the environment the revision's own workflow gives
// each (workflow.go), and what each launches (a dry run, recipe/dryrun),
// what a change base..head changed recipe by recipe and launch by launch
// (Change, Effect), and the lint of a revision's scripts against its
// recipes (the script-level rules are recipe/lint's).
//
// Dependencies: config, recipe/dryrun, recipe/lint, recipe/revfs,
// internal/pyyaml, internal/ghexpr (the workflow's expressions), internal/lru,
// gopkg.in/yaml.v3 (its workflow files), mvdan.cc/sh/v3 (the workflow's
// launch step); never git (a *gitscan.Tree, or a work tree as
// revfs.Dir, is read as an fs.FS). The changelog package uses it for
// verify's coverage, claims and lint rules.
package recipe
