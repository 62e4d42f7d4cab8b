// Package provenance attributes a repository's changelog entries and
// recipe fields to the first-parent commits and pull requests that
// introduced them: perflog's history engine.
//
// # History
//
// Build walks the first-parent chain from a head commit (gitscan.Track)
// and notes, per commit, the blob of the changelog and of each master
// config file (configs/*-master.yaml, and .github/configs/ where they lived
// before; a commit uses the first layout that has any file). Each distinct
// blob is read once, newest first, on a goroutine beside the walk, and cut
// into top-level blocks at column 0: a changelog entry per "- " item, a
// recipe per key. Equal block texts share one block, parsed once (with
// PyYAML semantics, package pyyaml): over the real InferenceX history, 810
// versions of a 400 KB changelog hold ~940 distinct entries. A version
// that does not split at column 0 is loaded whole.
//
// A version of the changelog that does not load (three did, on InferenceX)
// is skipped: the previous version stands, and a Note says so. A recipe
// that does not load is skipped the same way, per key.
//
// # Changelog entries
//
// An entry's identity is its content: config-keys, description and flags,
// with pr-link and YAML formatting ignored. Consecutive versions are
// aligned by identity (an LCS, then equal identities anywhere, since files
// get reordered), so a mid-file insertion, a re-indent, a reorder or a
// pr-link correction moves no entry. Between two aligned entries, an old
// and a new entry that name the same config-keys (else the same pr-link,
// else the same description, else the only two) are one entry edited in
// place; the rest were added or removed.
//
// Each entry's Lineage lists its events: introduced, pr-link-changed (only
// the link changed), edited, removed, reverted (removed by a commit whose
// subject starts `Revert "`), re-added (an identity removed earlier came
// back). An entry first seen right after versions that did not load is
// attributed to the oldest of them whose text holds all its config-keys and
// description lines (Event.Unloadable).
//
// An entry's introduction is its newest introduced, re-added or edited
// event; an edit made by an ignored revision does not count. Audit judges
// the pr-link against it (see Verdict): ok, corrected, relanded, edited,
// backfilled, placeholder, no-pr, mismatch.
//
// # Recipe fields
//
// A recipe is flattened into leaf fields (config.Flatten): scalars and
// lists of scalars (conc-list) at dotted paths with list indexes,
// "scenarios.fixed-seq-len[0].search-space[1].conc-list". Two versions of
// a recipe are compared structurally (config.Diff): mappings key by key;
// lists of mappings aligned by content, so an inserted search-space entry
// does not change its neighbours; a subtree that moves (seq-len-configs
// became scenarios.fixed-seq-len) is followed; formatting and comments do
// not count. A key that disappears while a key with a near-identical recipe
// appears in the same commit was renamed (RenameThreshold); its history
// continues under the new key.
//
// Blame gives each field the commit since which it has held its value
// continuously: walking the key's events back from the revision, the
// first event that changed the field, or added the subtree holding it, or
// created the recipe. A change made by an ignored revision is looked
// through: the field is followed to the value that commit replaced (and,
// for a field it added, to the removed field with the same value and the
// longest common path suffix). Log lists the key's events with their field
// changes and the changelog entries of the same commit that name the key.
//
// Search-space rows are followed by their parallelism (config.RowKey: tp,
// ep, dp-attn, spec-decoding, and a multi-node row's prefill and decode):
// when a PR rewrites a search-space list, a row continues the old row of
// the same parallelism wherever it stood, and a row of new parallelism is
// new, its fields held since that PR, even when a deleted row of other
// parallelism had the same conc-start.
//
// # Dependencies
//
// Dependencies: gitscan (reading), config (recipes, globs and settings),
// changelog (entry values: identity, pr-link and edits),
// changelog/claims, recipe, recipe/dryrun, recipe/revfs (launches),
// internal/pyyaml, internal/xdiff, github.com/go-git/go-git/v5 (object
// ids). Nothing here imports the command line.
package provenance
