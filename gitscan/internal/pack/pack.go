// Package pack reads objects out of a git repository's pack files
// (gitformat-pack(5)): a mapped index view, a reader that inflates entries
// and applies deltas, and a byte-bounded cache of decoded delta bases.
//
// It is gitscan's fast path, not its reader of record: gitscan asks go-git
// for every object this package does not hold or does not decode
// (ErrNotFound), and the tests read every object of the corpus with both.
// go-git's object storage re-inflates and copies each object through its
// generic cache, which is several times slower on a walk or on a file's
// versions (gitscan's BenchmarkFirstParent, docs/dev/performance.md).
//
// Every object is inflated to the end of its zlib stream, so that the
// stream's Adler-32 checksum is verified; a mismatch, or a stream that
// ends before or after the object's size, is ErrCorrupt, never content.
// Commits and trees are also hashed and checked against their ids; blobs
// are not (a cold audit reads hundreds of MB of changelog versions).
//
// Dependencies: github.com/go-git/go-git/v5 (object ids and types, and its
// index decoder for indexes it does not map).
package pack

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrCorrupt marks repository corruption: an object whose compressed data
// fails its checksum or does not decode to the object's size, or whose
// content does not hash to its id.
var ErrCorrupt = errors.New("the repository is corrupt")

// ErrNotFound: no pack holds the object in a form this package decodes
// (it is loose, in an alternate, a delta against an object outside the
// packs, or an entry this reader does not know); go-git's storage is to
// read it.
var ErrNotFound = errors.New("not read from the packs")

// ID is the id git gives an object of type t and content data.
func ID(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	var hdr [32]byte
	h.Write(strconv.AppendInt(append(append(hdr[:0], t.Bytes()...), ' '), int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var id plumbing.Hash
	h.Sum(id[:0])
	return id
}

// Set is the packs of one objects directory, opened and mapped once and
// shared by the Readers of a repository: a pack is read-only, and every
// mapping of it counts in the process's resident memory (twenty readers
// each mapping a 15 MB pack showed as 300 MB). A Set is safe for
// concurrent use.
type Set struct {
	dir   string
	once  sync.Once
	packs []*file
	// damaged are the packs that did not open because they are damaged
	// (an object the others lack may be in one: Damaged says so)
	damaged []error
}

// OpenSet returns the packs of the objects directory dir; they are opened
// on first use.
func OpenSet(dir string) *Set { return &Set{dir: dir} }

// get opens every pack's index on first use; a pack that fails to open
// is left to go-git.
func (s *Set) get() []*file {
	s.once.Do(func() {
		idxs, _ := filepath.Glob(filepath.Join(s.dir, "pack", "pack-*.idx"))
		sort.Strings(idxs)
		for _, p := range idxs {
			pk, err := openFile(p)
			switch {
			case err == nil:
				s.packs = append(s.packs, pk)
			case errors.Is(err, ErrCorrupt):
				s.damaged = append(s.damaged, err)
			}
		}
	})
	return s.packs
}

// Damaged is why a pack of the set could not be read (nil when none is
// damaged): an object the set does not find may be in it.
func (s *Set) Damaged() error {
	s.get()
	return errors.Join(s.damaged...)
}

// Close unmaps and closes the packs; the Set and its Readers must not be
// used after.
func (s *Set) Close() {
	s.once.Do(func() {}) // a set never opened stays closed
	for _, p := range s.packs {
		unmapFile(p.data)
		unmapFile(p.idxb)
		p.f.Close()
	}
	s.packs = nil
}

// file is one pack and its index.
type file struct {
	idx  index
	idxb []byte // the mapped index file, or nil
	f    *os.File
	data []byte // the mapped pack file, or nil (then f is read)
	end  int64  // offset of the trailing checksum
}

func openFile(idxPath string) (*file, error) {
	f, err := os.Open(idxPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx, idxb, err := openIndex(f)
	if err != nil {
		return nil, err
	}
	pf, err := os.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack")
	if err != nil {
		unmapFile(idxb)
		return nil, err
	}
	fi, err := pf.Stat()
	if err != nil || fi.Size() < 32 {
		pf.Close()
		unmapFile(idxb)
		return nil, fmt.Errorf("%s: short pack", pf.Name())
	}
	return &file{idx: idx, idxb: idxb, f: pf, end: fi.Size() - 20, data: mapFile(pf, fi.Size())}, nil
}
