package gitscan

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/perflog/perflog/gitscan/internal/pack"
	"github.com/perflog/perflog/internal/lru"
)

// objects reads commits, trees and blobs: from the packs through
// gitscan/internal/pack, and anything that package does not read (loose
// objects, alternates, deltas against objects outside the packs,
// in-memory repositories, entries it does not know) from go-git's object
// storage, so that a result never depends on the fast path. An objects
// value is not safe for concurrent use.
type objects struct {
	packs    *pack.Reader // nil in memory
	fallback *fallback
}

// fallback is go-git's object storage, shared by the objects values of
// one Repo. mu serialises it (it is not safe for concurrent use). In a
// repository on disk, the commits and trees it reads are kept: they are
// loose objects (a commit made since the last repack), and a file's path
// is looked up from the commit's root tree every time, each read of a
// loose object opening, inflating and hashing a file again (verify of a
// commit made locally: 1.23x faster; docs/dev/performance.md).
type fallback struct {
	mu   sync.Mutex
	st   storer.EncodedObjectStorer
	kept *lru.Cache[plumbing.Hash, keptObject] // nil in memory
}

type keptObject struct {
	t    plumbing.ObjectType
	data []byte
}

// keptLoose bounds the loose commits and trees kept: a commit's new trees
// are one per directory it changed.
const keptLoose = 256

func newFallback(st storer.EncodedObjectStorer, onDisk bool) *fallback {
	f := &fallback{st: st}
	if onDisk {
		f.kept = lru.New[plumbing.Hash, keptObject](keptLoose)
	}
	return f
}

// Cache budgets bound the bytes of decoded objects kept for delta bases:
// a walk's reader keeps commits and trees, a blob scan's reader the last
// versions read. Reading one file's versions newest first, an object's
// base is almost always the one read just before it (git deltifies older
// versions against newer ones): a key's blame on the corpus decodes as
// many deltas with a 1 MB cache as with 8 MB. Small budgets keep the heap
// small; evicted buffers are reused.
//
// A blob reader serves one file's versions (ScanBlobs; ScanStreams keeps
// one reader per file): read through one cache, several files' bases
// evict each other (a history three times the corpus's inflated 14 times
// as many objects). A stream's reader starts with blobCacheBudget, and the
// readers of one scan may grow by blobCacheRoom between them when they
// find themselves decoding again what they evicted.
const (
	walkCacheBudget = 1 << 20
	blobCacheBudget = 2 << 20
	blobCacheRoom   = 32 << 20
)

// The budgets of ScanStreams's readers (variables for the tests, which
// starve them).
var streamBudget, streamRoom = blobCacheBudget, blobCacheRoom

func newObjects(ps *pack.Set, fb *fallback, budget int) *objects {
	o := &objects{fallback: fb}
	if ps != nil {
		o.packs = pack.NewReader(ps, budget)
	}
	return o
}

// read returns an object's type and content. The content may be shared
// with the cache: callers must not modify it, and may keep it.
func (o *objects) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return o.readVia(h, (*pack.Reader).Read)
}

// size returns an object's inflated size without reading its content.
func (o *objects) size(h plumbing.Hash) (int64, error) {
	if o.packs != nil {
		n, err := o.packs.Size(h)
		if !errors.Is(err, pack.ErrNotFound) {
			return n, err
		}
	}
	f := o.fallback
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kept != nil {
		if k, ok := f.kept.Get(h); ok {
			return int64(len(k.data)), nil
		}
	}
	return f.st.EncodedObjectSize(h)
}

// readTransient is read for a caller that drops the content before its
// next call into o: the buffer may later be reused for another object.
func (o *objects) readTransient(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return o.readVia(h, (*pack.Reader).ReadTransient)
}

// readVia reads h with packRead, or from go-git what the packs leave to it.
func (o *objects) readVia(h plumbing.Hash, packRead func(*pack.Reader, plumbing.Hash) (plumbing.ObjectType, []byte, error)) (plumbing.ObjectType, []byte, error) {
	if o.packs != nil {
		t, b, err := packRead(o.packs, h)
		if !errors.Is(err, pack.ErrNotFound) {
			return t, b, err
		}
	}
	return o.readFallback(h)
}

func (o *objects) readFallback(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	f := o.fallback
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kept != nil {
		if k, ok := f.kept.Get(h); ok {
			return k.t, k.data, nil
		}
	}
	obj, err := f.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		if o.packs != nil {
			if bad := o.packs.Set().Damaged(); bad != nil {
				// not found, and a pack that may hold it is damaged: the
				// repository is, not the revision unknown
				return plumbing.InvalidObject, nil, fmt.Errorf("object %s: %w", h, bad)
			}
		}
		return plumbing.InvalidObject, nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer rd.Close()
	// (a damaged header may claim any size: it is a hint, not an allocation)
	buf := bytes.NewBuffer(make([]byte, 0, min(max(obj.Size(), 0), 1<<20)))
	if _, err := buf.ReadFrom(rd); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	// go-git's packfile reader trusts what it decodes: an object read
	// through it is checked against its id (these reads are rare: loose
	// objects, alternates, entries the pack reader leaves to it)
	if id := pack.ID(obj.Type(), buf.Bytes()); id != h {
		return plumbing.InvalidObject, nil, fmt.Errorf("object %s: %w: its content hashes to %s", h, ErrCorrupt, id)
	}
	if t := obj.Type(); f.kept != nil && (t == plumbing.CommitObject || t == plumbing.TreeObject) {
		f.kept.Put(h, keptObject{t, buf.Bytes()})
	}
	return obj.Type(), buf.Bytes(), nil
}

// ErrCorrupt marks repository corruption: an object whose compressed data
// fails its checksum or does not decode to the object's size, or whose
// content does not hash to its id. It is a runtime error, never a verdict.
var ErrCorrupt = pack.ErrCorrupt
