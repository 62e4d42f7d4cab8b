// Package recipe knows the benchmark scripts that run recipes: a
// revision's files and recipes read as far as asked (Rev), which script
// runs which recipe (with config's rules), what a script does (flags,
// environment, arrays; parsed with mvdan.cc/sh), what a change base..head
// changed recipe by recipe (Change), and the recipe-script lint.
//
// Dependencies: config, recipe/dryrun, recipe/revfs, internal/pyyaml,
// mvdan.cc/sh/v3; never git (a *gitscan.Tree, or a work tree as
// revfs.Dir, is read as an fs.FS). The changelog package uses it for
// verify's coverage, claims and lint rules.
package recipe
