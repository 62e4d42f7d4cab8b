// Package claims reads what the description bullets of a changelog entry
// claim (an image, an environment variable, an engine flag, concurrencies,
// parallelism, sequence lengths, speculative decoding, KV offloading,
// append-only) and judges each claim against a change: the recipes the
// entry lists at head and base, the files that run them and, when given,
// what their points launch (recipe.Effect).
//
// Its input is narrow: an Entry is the bullets, their lines and the
// config-keys patterns; reading them out of the changelog's YAML is
// package changelog's (ClaimInput). A claim is contradicted only when the
// evidence says otherwise; what cannot be checked is unverified. Kinds,
// verdicts and the JSON of Result are part of perflog's output contract.
//
// Dependencies: recipe, recipe/dryrun, recipe/revfs, config; never git.
package claims
