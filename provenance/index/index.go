// Package index keeps perflog's persistent, incremental index of a
// repository's structured history, and answers SQL over it.
//
// The index is one SQLite file, <git common dir>/perflog/index-v1.db
// (modernc.org/sqlite, pure Go). It holds two things:
//
//   - the inputs of a provenance.History (a provenance.Snapshot): the
//     first-parent chain with commit metadata, every distinct changelog
//     entry and recipe seen in history, and each tracked file's versions
//     as deltas. Audit, blame, log and diff restore a History from these
//     and run the very code they run without an index, so their answers
//     are the same with and without it;
//   - documented tables derived from that history for `perflog query`
//     (Schema): commits, entries, entry_keys, entry_events,
//     recipe_events, field_changes, recipes_at_head, fields_at_head,
//     notes, and the check tables claims and findings, which Check fills
//     on demand (see checks.go).
//
// Sync brings the index to a revision: it walks from the revision down
// to the first commit the index knows, reads only the commits above it
// and stores what they add. A revision that is not a descendant of the
// indexed head (a force-push, a rebase, another branch) is detected the
// same way: the index is truncated to the last common commit and the new
// suffix indexed. An index with another schema, other settings, another
// shallow-clone boundary (Options.Shallow), a table missing or contents
// that do not hold together is rebuilt, never trusted; a stored answer
// is never read from one. Queries (Query) may only read. Updates
// run in one write transaction (BEGIN IMMEDIATE), so concurrent perflog
// processes are safe: a second updater waits, then finds the work done.
// Deleting the file is always safe.
//
// Dependencies: provenance, changelog, changelog/claims, gitscan, config,
// recipe, recipe/dryrun, internal/wire, modernc.org/sqlite,
// github.com/go-git/go-git/v5. The command line lives in cmd/perflog.
package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"modernc.org/sqlite" // the database/sql driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe/dryrun"
)

// SchemaVersion changes whenever the stored format or what a stored
// answer holds does (21: dry runs no longer record perflog's pid for $$, and
// recipes of the launcher families before the head's resolve);
// an index of another version is rebuilt.
const SchemaVersion = "22"

// FileName is the index file inside <git common dir>/perflog/.
const FileName = "index-v1.db"

// Sentinel errors.
var (
	ErrNoIndex  = errors.New("no index")
	ErrReadOnly = errors.New("query must be read-only")
	// ErrNotWritable: the index file, or its directory, cannot be
	// written by this process; it is left as it is.
	ErrNotWritable = errors.New("cannot be written by this user")
)

// Path returns where the index of a repository lives ("" for a
// repository without a git directory, e.g. in memory).
func Path(r *gitscan.Repo) string {
	if d := r.CommonDir(); d != "" {
		return filepath.Join(d, "perflog", FileName)
	}
	return ""
}

// Index is an open index.
type Index struct {
	db   *sql.DB
	path string
	// fresh: the file did not exist when it was opened (or was removed
	// to be rebuilt). It is built in SQLite's default rollback-journal
	// mode, which writes each page of a whole new database once, where
	// the WAL would write it twice (to the log, then into the file on
	// the checkpoint: a tenth of a second on the real history); once
	// built it is switched to the WAL (see toWAL).
	fresh bool
}

// Open opens the index at path, creating it when create is set.
func Open(path string, create bool) (*Index, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: the repository has no git directory", ErrNoIndex)
	}
	fi, err := os.Stat(path)
	fresh := err != nil
	if fresh {
		if !create {
			return nil, fmt.Errorf("%w at %s", ErrNoIndex, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
	} else if f, err := os.OpenFile(path, os.O_RDWR, 0); errors.Is(err, fs.ErrPermission) {
		// refused before SQLite opens it: SQLite would leave a WAL and
		// shared-memory file of this user's beside it, which the owner
		// of the index could not then write
		return nil, fmt.Errorf("%s %w (%w)", path, ErrNotWritable, err)
	} else if err == nil {
		f.Close()
		if fi.Size() == 0 {
			// left empty by a first build that was interrupted: fresh,
			// unless a WAL beside it holds what the file does not yet
			_, werr := os.Stat(path + "-wal")
			fresh = errors.Is(werr, fs.ErrNotExist)
		}
	}
	db, err := sql.Open("sqlite", dsn(path, fresh))
	if err != nil {
		return nil, err
	}
	return &Index{db: db, path: path, fresh: fresh}, nil
}

// dsn is the connection string of the index at path: WAL (readers never
// wait for the writer), a busy timeout for concurrent writers, and reads
// through a memory map. A fresh file keeps SQLite's rollback journal until
// it is built (the WAL mode, once set, is the file's own), is not mapped,
// and has a small page cache and in-memory statement journals: a build
// writes its pages once and reads few back (docs/dev/performance.md has
// the measurements).
func dsn(path string, fresh bool) string {
	mode := "&_pragma=journal_mode(WAL)&_pragma=mmap_size(1073741824)"
	if fresh {
		mode = "&_pragma=cache_size(-256)&_pragma=temp_store(MEMORY)"
	}
	return "file:" + path + "?_pragma=busy_timeout(10000)" + mode + "&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

// Close closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

// toWAL switches a fresh index, once built, to the WAL, on the
// connections that built it, so that the file is in WAL mode when this
// process leaves it (the mode is the file's: connections opened later
// find it, whatever they ask). They stay as a fresh file's for the rest of
// the run: opening new ones would close these and give SQLite's caches
// back to the OS page by page.
func (ix *Index) toWAL(ctx context.Context) error {
	if !ix.fresh {
		return nil
	}
	// another process reading the file in rollback mode holds off the
	// switch, which SQLite does not wait for
	var mode string
	err := whileBusy(ctx, func() error {
		return ix.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
	})
	// (a mode SQLite could not change is left: the next process that
	// opens the file as built switches it)
	ix.fresh = err != nil || mode != "wal"
	return err
}

// remove deletes the index files (the database, its WAL or rollback
// journal); the file is then fresh.
func (ix *Index) remove() error {
	ix.db.Close()
	for _, p := range []string{ix.path, ix.path + "-wal", ix.path + "-shm", ix.path + "-journal"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	db, err := sql.Open("sqlite", dsn(ix.path, true))
	if err != nil {
		return err
	}
	ix.db, ix.fresh = db, true
	return nil
}

const schema = `
CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE commits(seq INTEGER PRIMARY KEY, sha TEXT NOT NULL UNIQUE, author TEXT, email TEXT, date TEXT, subject TEXT, pr INTEGER, pr_source TEXT);
CREATE TABLE blocks(id INTEGER PRIMARY KEY, recipe INTEGER NOT NULL, key TEXT, text TEXT NOT NULL);
CREATE TABLE entries(id INTEGER PRIMARY KEY, alive INTEGER NOT NULL, position INTEGER, line INTEGER, config_keys TEXT, description TEXT,
  pr_link TEXT, pr_link_pr INTEGER, introduced_sha TEXT, introduced_pr INTEGER, introduced_date TEXT, verdict TEXT, reason TEXT,
  fingerprint TEXT);
CREATE TABLE entry_keys(entry INTEGER NOT NULL, config_key TEXT NOT NULL);
CREATE TABLE entry_events(entry INTEGER NOT NULL, seq INTEGER NOT NULL, sha TEXT NOT NULL, kind TEXT NOT NULL, pr_link TEXT, from_link TEXT, note TEXT,
  fingerprint TEXT);
CREATE TABLE recipe_events(key TEXT NOT NULL, seq INTEGER NOT NULL, sha TEXT NOT NULL, kind TEXT NOT NULL, from_key TEXT, to_key TEXT, file TEXT, missing_entry INTEGER);
CREATE TABLE field_changes(key TEXT NOT NULL, seq INTEGER NOT NULL, sha TEXT NOT NULL, kind TEXT NOT NULL, path TEXT, old_path TEXT, old TEXT, new TEXT);
CREATE TABLE recipes_at_head(key TEXT PRIMARY KEY, file TEXT, line INTEGER, image TEXT, model TEXT, model_prefix TEXT, runner TEXT,
  precision TEXT, framework TEXT, multinode INTEGER);
CREATE TABLE fields_at_head(key TEXT NOT NULL, path TEXT NOT NULL, value TEXT);
CREATE TABLE notes(seq INTEGER, sha TEXT, file TEXT, message TEXT);
CREATE TABLE answers(name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE snapshot(seg INTEGER PRIMARY KEY, part INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE blame_cache(key TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE launch_states(key TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE launch_changes(seq INTEGER, sha TEXT NOT NULL, key TEXT NOT NULL, point TEXT NOT NULL, path TEXT NOT NULL, old TEXT, new TEXT, not_known_from TEXT);
CREATE INDEX launch_changes_key ON launch_changes(key, seq);
CREATE TABLE launches_at_head(key TEXT NOT NULL, point TEXT NOT NULL, path TEXT NOT NULL, value TEXT, through TEXT NOT NULL);
CREATE INDEX launches_at_head_key ON launches_at_head(key);
CREATE TABLE claims(entry INTEGER NOT NULL, bullet INTEGER, kind TEXT, text TEXT, name TEXT, negated INTEGER, value TEXT, from_value TEXT,
  verdict TEXT, reason TEXT, sha TEXT, evidence TEXT, data TEXT);
CREATE TABLE claims_checked(entry INTEGER PRIMARY KEY, key TEXT NOT NULL);
CREATE TABLE findings(rule TEXT, severity TEXT, file TEXT, line INTEGER, config_key TEXT, message TEXT, source TEXT);
CREATE INDEX claims_entry ON claims(entry);
CREATE INDEX recipe_events_key ON recipe_events(key, seq);
CREATE INDEX field_changes_key ON field_changes(key, seq);
CREATE INDEX entry_events_entry ON entry_events(entry, seq);
CREATE INDEX entry_keys_key ON entry_keys(config_key);
CREATE INDEX fields_at_head_key ON fields_at_head(key);
CREATE VIEW entry_prs AS
  SELECT e.id AS entry, e.position, e.verdict, e.pr_link_pr, e.introduced_pr, c.sha, c.date, c.subject
  FROM entries e LEFT JOIN commits c ON c.sha = e.introduced_sha;
CREATE VIEW latest_entries AS
  SELECT r.key, e.id AS entry, max(e.position) AS position, e.introduced_pr AS pr
  FROM recipes_at_head r JOIN entry_keys k ON r.key GLOB k.config_key JOIN entries e ON e.id = k.entry
  WHERE e.alive GROUP BY r.key;
`

// schemaObjects lists the names of the tables, indexes and views the
// schema creates.
var schemaObjects = sync.OnceValue(func() []string {
	var out []string
	for _, m := range regexp.MustCompile(`CREATE (?:TABLE|INDEX|VIEW) (\w+)`).FindAllStringSubmatch(schema, -1) {
		out = append(out, m[1])
	}
	return out
})

// Fingerprint is what the stored history depends on besides git: the
// settings that locate the files and name the repository.
func Fingerprint(s *config.Settings) string {
	var b strings.Builder
	b.WriteString(s.ChangelogPath())
	for _, l := range s.MasterCandidates() {
		b.WriteString("|" + strings.Join(l, ","))
	}
	b.WriteString("|" + strings.Join(s.RepositoryNames(), ","))
	return b.String()
}

// Options configures Sync.
type Options struct {
	Settings *config.Settings
	// IgnoreRevs are the settings' ignore-revs: the query tables (verdicts)
	// are computed with them, and rewritten when they change.
	IgnoreRevs []plumbing.Hash
	// Rebuild discards the index and indexes from scratch.
	Rebuild bool
	// Exact makes rev the indexed head even when it is an older commit of
	// the indexed chain (the commits above it are dropped; the next sync to
	// a later commit indexes them again). Without it such a sync changes
	// nothing: audit and blame at an older commit are computed from the
	// stored history, but the query tables describe the indexed head.
	Exact bool
	// Progress reports a build from git.
	Progress func(provenance.Progress)
	// DryRun is how recipes are dry-run (launch walks, claims).
	DryRun dryrun.Options
	PRs    provenance.PRResolver
	// BeforeSync, when set, is called by History before it brings the
	// index up to date (Sync) instead of answering from it as stored: a
	// caller preparing for the heavier work (a progress line, say).
	BeforeSync func()
	// Shallow is the repository's shallow boundary (gitscan.ShallowCommits):
	// a history read from a shallow clone attributes what existed at its
	// boundary to the boundary, so the index stores it with the boundary and
	// is rebuilt when the boundary moves (git fetch --deepen, --unshallow).
	Shallow []plumbing.Hash
}

// fingerprint is what the stored history depends on besides the commits
// on its chain: the settings and the shallow boundary.
func (o Options) fingerprint() string {
	fp := Fingerprint(o.Settings)
	if len(o.Shallow) > 0 {
		var b strings.Builder
		b.WriteString(fp + "|shallow:")
		for i, h := range o.Shallow {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(h.String())
		}
		fp = b.String()
	}
	return fp
}

// Stats describes what a Sync did.
type Stats struct {
	mark time.Time

	Head     plumbing.Hash
	Commits  int // commits on the indexed chain
	New      int // commits read from git by this sync
	Dropped  int // commits dropped (history rewritten)
	Rebuilt  bool
	Duration time.Duration
	// Phases is where the time of the sync went, phase by phase: open,
	// load, restore, then, when it read commits, build, store, audit,
	// entries, recipes and commit (a rebuild after a stale index reports
	// its own).
	Phases []Phase
}

// Phase is one step of a sync and its duration.
type Phase struct {
	Name     string
	Duration time.Duration
}

// lap ends the phase name, begun when the previous one ended.
func (st *Stats) lap(name string) {
	now := time.Now()
	st.Phases = append(st.Phases, Phase{name, now.Sub(st.mark)})
	st.mark = now
}

// Sync brings the index to rev (see the package documentation) and
// returns the history restored from it, with rev on its chain.
func (ix *Index) Sync(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, o Options) (*provenance.History, *Stats, error) {
	start := time.Now()
	st := &Stats{Head: rev}
	fp := o.fingerprint()
	// one writer at a time: a rebuild removes the files, which SQLite's
	// locks do not cover (two concurrent rebuilds failed with "disk I/O
	// error"); a second writer waits, then finds the work done
	unlock, err := lockFile(ctx, ix.path+".lock")
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	if o.Rebuild {
		if err := ix.remove(); err != nil {
			return nil, nil, err
		}
	}
	var h *provenance.History
	err = retry(func() error {
		return whileBusy(ctx, func() error {
			var err error
			h, err = ix.sync(ctx, r, rev, fp, o, st)
			return err
		})
	}, func() error { st.Rebuilt = true; return ix.remove() })
	if notWritable(err) {
		return nil, nil, fmt.Errorf("%s %w (%w)", ix.path, ErrNotWritable, err)
	}
	if err == nil {
		err = ix.toWAL(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	st.Commits = len(h.Chain)
	st.Duration = time.Since(start)
	return h, st, nil
}

// errStale means the stored index cannot be used (schema, settings,
// corruption); the caller removes it and syncs again.
var errStale = errors.New("stale index")

// staleErr marks err, met reading the index, as making the index
// unusable, unless it is SQLite's "database is locked": another process
// holds a lock SQLite does not wait for (one switching a new file to WAL,
// say), which whileBusy waits out. Taking it for damage would delete the
// index under the other process's feet.
func staleErr(err error) error {
	if isBusy(err) {
		return err
	}
	if notWritable(err) {
		// another user's index, or a read-only file system: the index
		// may be sound, and is not this process's to remove
		return err
	}
	return fmt.Errorf("%w: %w", errStale, err)
}

// notWritable reports whether err is SQLite's refusal to open or write
// the file for want of permission (or of a writable directory for the
// WAL).
func notWritable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return true
		}
	}
	return false
}

func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// busyWait bounds how long whileBusy waits for other processes.
const busyWait = 2 * time.Minute

// whileBusy runs f again while it fails because the database is locked,
// with a growing pause, until ctx ends or busyWait has passed.
func whileBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(busyWait)
	pause := 10 * time.Millisecond
	for {
		err := f()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// retry runs f; when f finds the index stale it rebuilds once.
func retry(f, reset func() error) error {
	err := f()
	if errors.Is(err, errStale) {
		if rerr := reset(); rerr != nil {
			return rerr
		}
		err = f()
	}
	return err
}

func (ix *Index) sync(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, fp string, o Options, st *Stats) (*provenance.History, error) {
	st.Phases, st.mark = nil, time.Now()
	// the write lock first: a concurrent updater is waited for, and its
	// work is then found done
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, staleErr(err)
	}
	defer tx.Rollback()
	ok, err := ix.valid(ctx, tx, fp)
	if err != nil {
		return nil, err
	}
	st.lap("open")
	var base *provenance.History
	if ok {
		snap, err := load(ctx, tx, provenance.PartsAll)
		if err != nil {
			return nil, staleErr(err)
		}
		st.lap("load")
		// when rev is not indexed, the history is restored only as the
		// base of the Build, which derives its own
		indexed := holds(snap, rev)
		if indexed && o.Exact {
			// an older commit of the indexed chain becomes the head: the
			// commits above it are dropped, as for a rewritten history
			head, err := getMeta(ctx, tx, "head")
			if err != nil {
				return nil, err
			}
			indexed = head == rev.String()
		}
		texts := &blockTexts{db: ix.db, tx: tx}
		defer texts.detach()
		if base, err = ix.restore(ctx, r, snap, o, !indexed, texts); err != nil {
			return nil, staleErr(err)
		}
		st.lap("restore")
		if indexed {
			// rev is indexed; refresh the query tables if the ignore-revs
			// they were computed with changed
			if ig, err := getMeta(ctx, tx, "ignore"); err != nil {
				return nil, err
			} else if ig != ignoreKey(o.IgnoreRevs) {
				if err := writeOutputs(ctx, tx, base, -1, st, nil); err != nil {
					return nil, err
				}
				if err := setMeta(ctx, tx, "ignore", ignoreKey(o.IgnoreRevs)); err != nil {
					return nil, err
				}
			}
			return base, tx.Commit()
		}
	} else if err := create(ctx, tx, fp); err != nil {
		return nil, err
	}
	// new blocks are numbered past every stored one: the blocks of
	// commits a rewritten history dropped stay stored (see store)
	firstBlock, err := queryOne[int](ctx, tx, `SELECT coalesce(max(id), -1) + 1 FROM blocks`)
	if err != nil {
		return nil, err
	}
	h, err := provenance.Build(ctx, r, provenance.Options{Head: rev, Settings: o.Settings, Parts: provenance.PartsAll,
		IgnoreRevs: o.IgnoreRevs, Progress: o.Progress, PRs: o.PRs, Base: base, FirstBlockID: firstBlock})
	if err != nil {
		return nil, err
	}
	st.lap("build")
	fork := -1 // the last seq both chains share
	if base != nil {
		for sq := 0; sq < len(base.Chain) && sq < len(h.Chain) && base.Chain[sq] == h.Chain[sq]; sq++ {
			fork = sq
		}
		st.Dropped = len(base.Chain) - 1 - fork
	}
	st.New = len(h.Chain) - 1 - fork
	sd, err := snapshotFor(ctx, tx, h, fork, base != nil && st.Dropped == 0)
	if err != nil {
		return nil, err
	}
	outFork := fork
	if ig, _ := getMeta(ctx, tx, "ignore"); ig != ignoreKey(o.IgnoreRevs) {
		outFork = -1 // the query tables were computed with other ignore-revs
	}
	// a rewritten history dropped commits whose recipe changes the rows at
	// head still hold: their keys are computed again too
	var dropped []string
	if st.Dropped > 0 && outFork >= 0 {
		// (the stored events above fork are the dropped commits'; a
		// rename names both keys)
		if dropped, err = queryList[string](ctx, tx, `SELECT DISTINCT key FROM recipe_events WHERE seq > ?`, outFork); err != nil {
			return nil, err
		}
		// and a recipe whose dropped versions did not load has no events
		// there, but its stored blame has their notes
		dropped = append(dropped, base.KeysWrittenAfter(outFork)...)
	}
	// the recipe rows are computed on the other cores while the snapshot,
	// the commits and the entries are written
	var prev map[string]*provenance.BlameReport
	if outFork >= 0 && st.Dropped == 0 {
		if prev, err = storedBlames(ctx, tx, h, outFork); err != nil {
			return nil, err
		}
	}
	rec := startRecipesFrom(h, outFork, prev, dropped...)
	defer rec.stop()
	if err := store(ctx, tx, sd); err != nil {
		return nil, err
	}
	st.lap("store")
	if err := writeOutputs(ctx, tx, h, outFork, st, rec); err != nil {
		return nil, err
	}
	st.lap("recipes")
	for k, v := range map[string]string{"head": rev.String(), "ignore": ignoreKey(o.IgnoreRevs)} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return nil, err
		}
	}
	err = tx.Commit()
	st.lap("commit")
	return h, err
}

// storedBlames reads the stored blames of the keys h changed above fork,
// when the stored rows at head are those of fork's commit (nil
// otherwise); a blame that does not decode is left out (its key's blame
// is then computed whole).
func storedBlames(ctx context.Context, tx *sql.Tx, h *provenance.History, fork int) (map[string]*provenance.BlameReport, error) {
	if head, err := getMeta(ctx, tx, "head"); err != nil || head != h.Chain[fork].String() {
		return nil, err
	}
	keys := h.KeysChangedAfter(fork)
	if len(keys) == 0 {
		return nil, nil
	}
	q, err := tx.PrepareContext(ctx, `SELECT data FROM blame_cache WHERE key = ?`)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	out := map[string]*provenance.BlameReport{}
	for _, k := range keys {
		var data []byte
		switch err := q.QueryRowContext(ctx, k).Scan(&data); {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return nil, err
		}
		if b, err := decodeBlame(data); err == nil {
			out[k] = b
		}
	}
	return out, nil
}

func ignoreKey(revs []plumbing.Hash) string {
	var ss []string
	for _, r := range revs {
		ss = append(ss, r.String())
	}
	sort.Strings(ss)
	return strings.Join(ss, ",")
}

func getMeta(ctx context.Context, tx queryer, k string) (string, error) {
	return queryOne[string](ctx, tx, `SELECT value FROM meta WHERE name = ?`, k)
}

// queryOne returns the single value q selects (the zero value when it
// selects no row).
func queryOne[T any](ctx context.Context, tx queryer, q string, args ...any) (T, error) {
	var v T
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return v, err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return v, err
		}
	}
	return v, rows.Err()
}

// queryList returns the values of the one column q selects.
func queryList[T any](ctx context.Context, tx queryer, q string, args ...any) ([]T, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// valid reports whether the stored index can be used; a missing schema is
// not an error (the index is new).
func (ix *Index) valid(ctx context.Context, tx queryer, fp string) (bool, error) {
	// every table, index and view of the schema: an empty file is new, one
	// that lacks some is damaged (a table dropped by hand would otherwise
	// answer as if empty)
	names, err := queryList[string](ctx, tx, `SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return false, staleErr(err)
	}
	if len(names) == 0 {
		return false, nil
	}
	for _, want := range schemaObjects() {
		if !slices.Contains(names, want) {
			return false, fmt.Errorf("%w: %s is missing", errStale, want)
		}
	}
	meta := map[string]string{}
	rows, err := tx.QueryContext(ctx, `SELECT name, value FROM meta`)
	if err != nil {
		return false, staleErr(err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return false, staleErr(err)
		}
		meta[k] = v
	}
	rows.Close()
	if meta["schema"] != SchemaVersion || meta["settings"] != fp || meta["head"] == "" {
		return false, fmt.Errorf("%w: schema %q, settings %q", errStale, meta["schema"], meta["settings"])
	}
	return true, nil
}

func create(ctx context.Context, tx *sql.Tx, fp string) error {
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return staleErr(err)
	}
	for k, v := range map[string]string{"schema": SchemaVersion, "settings": fp, "created": time.Now().UTC().Format(time.RFC3339)} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return err
		}
	}
	return nil
}

func setMeta(ctx context.Context, tx *sql.Tx, k, v string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value=excluded.value`, k, v)
	return err
}

// restore rebuilds the history from a snapshot loaded from the index
// (only as a Build base when baseOnly is set); block texts are read on
// demand.
func (ix *Index) restore(ctx context.Context, r *gitscan.Repo, snap *provenance.Snapshot, o Options, baseOnly bool, texts *blockTexts) (*provenance.History, error) {
	return provenance.Restore(ctx, snap, provenance.RestoreOptions{Settings: o.Settings, IgnoreRevs: o.IgnoreRevs,
		Text: texts.text, ReadBlob: r.ReadBlob, PRs: o.PRs, BaseOnly: baseOnly})
}

// blockTexts reads the texts of a restored history's blocks on demand:
// through the transaction of the sync that restored it while that is open,
// then on a statement of its own, prepared at the first read after (a
// restored history reads few texts or none, and a connection of its own
// costs more than they do: an update reads one).
type blockTexts struct {
	db   *sql.DB
	mu   sync.Mutex
	tx   *sql.Tx
	stmt *sql.Stmt
}

const blockTextQuery = `SELECT text FROM blocks WHERE id = ?`

func (b *blockTexts) text(id int) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var row *sql.Row
	if b.tx != nil {
		row = b.tx.QueryRowContext(context.Background(), blockTextQuery, id)
	} else {
		if b.stmt == nil {
			stmt, err := b.db.PrepareContext(context.Background(), blockTextQuery)
			if err != nil {
				return "", err
			}
			b.stmt = stmt
		}
		row = b.stmt.QueryRowContext(context.Background(), id)
	}
	var t string
	err := row.Scan(&t)
	return t, err
}

// detach makes the reads after it use a connection of their own (call it
// before the transaction ends).
func (b *blockTexts) detach() {
	b.mu.Lock()
	b.tx = nil
	b.mu.Unlock()
}

// History returns the history of rev from the index: restored as stored
// when rev is on the indexed chain (only the parts asked for: faster),
// else after a Sync to rev (Options.BeforeSync is called first).
func (ix *Index) History(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, parts provenance.Parts, o Options) (*provenance.History, *Stats, error) {
	if !o.Rebuild {
		if h, err := ix.load(ctx, r, rev, parts, o); err == nil && h != nil {
			return h, &Stats{Head: h.Head, Commits: len(h.Chain)}, nil
		}
	}
	if o.BeforeSync != nil {
		o.BeforeSync()
	}
	return ix.Sync(ctx, r, rev, o)
}

// load restores the stored history in one read transaction when it holds
// rev and its query tables were computed with o's ignore-revs; else it
// returns nil, and restores nothing: the Sync that follows restores what
// it needs itself (restoring the whole history for nothing made a history
// command with the index one commit behind take twice as long as perflog
// index).
func (ix *Index) load(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, parts provenance.Parts, o Options) (*provenance.History, error) {
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN DEFERRED`); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	if ok, err := ix.valid(ctx, conn, o.fingerprint()); err != nil || !ok {
		return nil, staleErr(err)
	}
	if ig, err := getMeta(ctx, conn, "ignore"); err != nil || ig != ignoreKey(o.IgnoreRevs) {
		return nil, err
	}
	// (the commits table answers at once; the snapshot is decoded only
	// for a history that holds rev)
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM commits WHERE sha = ?`, rev.String()).Scan(&n); err != nil {
		return nil, staleErr(err)
	}
	if n == 0 {
		return nil, nil
	}
	snap, err := load(ctx, conn, parts)
	if err != nil {
		return nil, staleErr(err)
	}
	if !holds(snap, rev) {
		// (they are written together; should they disagree, the Sync
		// indexes rev again)
		return nil, nil
	}
	return ix.restore(ctx, r, snap, o, false, &blockTexts{db: ix.db})
}

// holds reports whether rev is on the chain of a stored snapshot.
func holds(snap *provenance.Snapshot, rev plumbing.Hash) bool {
	return slices.ContainsFunc(snap.Commits, func(c provenance.SnapCommit) bool { return plumbing.Hash(c.Hash) == rev })
}

// queryer is what load and the writers need of a transaction.
type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// The snapshot (without block texts, which stay in the blocks table and
// are read on demand) is stored in parts, encoded as snapwire.go says: the
// history at the first build, then what each update appended
// (provenance.SnapshotAbove), so that indexing a commit writes what the
// commit adds. A rewritten history, or maxParts parts, is stored again
// whole.

// maxParts bounds the parts of the stored snapshot.
const maxParts = 64

// Each part is stored in segments of at most segBytes, one row each, in
// order of seg. A row that fits in its page (4 KiB, SQLite's default, which
// the index keeps) is read in place; a larger value spills into overflow
// pages, which SQLite copies into a buffer of its own allocated for the
// read, faulting in fresh pages for every update. A part is framed
// with its length and the CRC-64 of its bytes (sealPart), so that a
// segment lost or damaged makes the snapshot stale, never a different
// history.
const segBytes = 3900

// driverBlobs: modernc.org/sqlite hands over each BLOB value in a slice of
// its own, copied out of SQLite's memory, and database/sql passes that
// slice through as the sql.RawBytes a row is scanned into. The decoders of
// the stored answers adopt it (wire.Adopt) instead of copying it again: a
// warm audit then faults in its 2 MB once, not twice.
// TestDriverBlobsAreFresh checks that the driver still works so.

// sealPart frames data for storage: its length first (of the framed
// part, 8 bytes, so that a reader sizes its buffer from the first
// segment), then data, then the CRC-64 of data.
func sealPart(data []byte) []byte {
	out := make([]byte, 8, 8+len(data)+8)
	binary.LittleEndian.PutUint64(out, uint64(8+len(data)+8))
	out = append(out, data...)
	return binary.LittleEndian.AppendUint64(out, crc64.Checksum(data, crcTable))
}

// partSize is the length a framed part says it has; ok is false when
// that cannot be a part.
func partSize(first []byte) (int, bool) {
	if len(first) < 8 {
		return 0, false
	}
	n := binary.LittleEndian.Uint64(first)
	return int(n), n >= 16 && n <= maxPartBytes
}

// maxPartBytes bounds what a damaged length makes a reader allocate (the
// whole snapshot of a history ten times the corpus is 10 MB).
const maxPartBytes = 1 << 28

// openPart checks a framed part (its length and digest) and returns its
// data.
func openPart(part []byte) ([]byte, error) {
	n, ok := partSize(part)
	if !ok || n != len(part) || binary.LittleEndian.Uint64(part[n-8:]) != crc64.Checksum(part[8:n-8], crcTable) {
		return nil, fmt.Errorf("%w: a snapshot part does not match its length or digest", errStale)
	}
	return part[8 : n-8], nil
}

// load reads the stored snapshot, keeping the parts asked for.
func load(ctx context.Context, tx queryer, want provenance.Parts) (*provenance.Snapshot, error) {
	rows, err := tx.QueryContext(ctx, `SELECT part, data FROM snapshot ORDER BY seg`)
	if err != nil {
		return nil, err
	}
	var parts []*provenance.Snapshot
	var buf []byte // the part being read: its segments, joined
	part := -1
	flush := func() error {
		if part < 0 {
			return nil
		}
		data, err := openPart(buf)
		if err != nil {
			return err
		}
		p, err := decodeSnapshot(data) // adopts buf, which is not reused
		if err != nil {
			return err
		}
		parts = append(parts, p)
		buf = nil
		return nil
	}
	for rows.Next() {
		var n int
		var data sql.RawBytes
		if err := rows.Scan(&n, &data); err != nil {
			rows.Close()
			return nil, err
		}
		if n != part {
			if err := flush(); err != nil {
				rows.Close()
				return nil, err
			}
			part = n
		}
		if buf == nil {
			// a part's first segment says its size: one buffer for it
			size, ok := partSize(data)
			if !ok {
				rows.Close()
				return nil, fmt.Errorf("%w: a snapshot part does not say its size", errStale)
			}
			if size == len(data) {
				buf = data // a part of one segment: the driver's own copy, adopted (see driverBlobs)
				continue
			}
			buf = make([]byte, 0, size)
		}
		buf = append(buf, data...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, errors.New("no snapshot")
	}
	s, err := provenance.MergeSnapshots(parts[0], parts[1:]...)
	if err != nil {
		return nil, err
	}
	if want != provenance.PartsAll {
		recipes := want.Has(provenance.PartRecipes)
		var slots []provenance.SnapSlot
		for _, sl := range s.Slots {
			if sl.Recipe == recipes {
				slots = append(slots, sl)
			}
		}
		var blocks []provenance.SnapBlock
		for _, b := range s.Blocks {
			if b.Recipe == recipes {
				blocks = append(blocks, b)
			}
		}
		s.Slots, s.Blocks = slots, blocks
		s.Changelog, s.Recipes = want.Has(provenance.PartChangelog), recipes
		if !recipes {
			s.Renames, s.Raw, s.Touched = nil, nil, nil
		}
	}
	return s, nil
}

// stored is what store writes of a History: its snapshot, whole or the
// part above the stored one.
type stored struct {
	snap        *provenance.Snapshot
	whole       bool
	fork, maxID int
}

// snapshotFor takes what h adds above seq fork (everything when fork <
// 0): a snapshot part to append to the stored ones when appendable (h
// extends the stored history), else the whole snapshot. It reads h; store
// then only writes.
func snapshotFor(ctx context.Context, tx *sql.Tx, h *provenance.History, fork int, appendable bool) (*stored, error) {
	maxID, nparts := -1, 0
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), -1) FROM blocks`).Scan(&maxID); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT part) FROM snapshot`).Scan(&nparts); err != nil {
		return nil, err
	}
	out := &stored{fork: fork, maxID: maxID}
	var err error
	if appendable && fork >= 0 && nparts > 0 && nparts < maxParts {
		out.snap, err = h.SnapshotAbove(fork, maxID)
	} else {
		out.snap, err = h.Snapshot()
		out.whole = true
	}
	return out, err
}

// store writes a snapshot taken by snapshotFor: commits above its fork,
// blocks not stored yet, and the snapshot part (replacing the stored
// parts when whole).
func store(ctx context.Context, tx *sql.Tx, sd *stored) error {
	snap, fork, maxID := sd.snap, sd.fork, sd.maxID
	if sd.whole {
		if _, err := tx.ExecContext(ctx, `DELETE FROM snapshot`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM commits WHERE seq > ?`, fork); err != nil {
		return err
	}
	insC := newInserter(ctx, tx, "commits", "seq", "sha", "author", "email", "date", "subject", "pr", "pr_source")
	for i, c := range snap.Commits {
		if sq := snap.From + i; sq > fork {
			var pr any
			if c.PR > 0 {
				pr = c.PR
			}
			if err := insC.add(sq, plumbing.Hash(c.Hash).String(), c.Author, c.Email, c.Date.Format(time.RFC3339Nano), c.Subject, pr, c.PRSource); err != nil {
				return err
			}
		}
	}
	if err := insC.flush(); err != nil {
		return err
	}
	// blocks are immutable and shared: insert the ones not stored yet (a
	// number, once given, is never given to another text, the dropped
	// commits' included: see Options.FirstBlockID)
	lite := *snap
	lite.Blocks = make([]provenance.SnapBlock, len(snap.Blocks))
	insB := newInserter(ctx, tx, "blocks", "id", "recipe", "key", "text").bigRows()
	for i, b := range snap.Blocks {
		if b.ID > maxID {
			if b.Text == "" {
				return fmt.Errorf("block %d has no text to store", b.ID)
			}
			if err := insB.add(b.ID, b.Recipe, b.Key, b.Text); err != nil {
				return err
			}
		}
		b.Text = ""
		lite.Blocks[i] = b
	}
	if err := insB.flush(); err != nil {
		return err
	}
	data, err := encodeSnapshot(&lite)
	if err != nil {
		return err
	}
	part := 0
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(part), -1) + 1 FROM snapshot`).Scan(&part); err != nil {
		return err
	}
	ins := newInserter(ctx, tx, "snapshot", "part", "data")
	for data = sealPart(data); len(data) > 0; {
		n := min(len(data), segBytes)
		if err := ins.add(part, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return ins.flush()
}
