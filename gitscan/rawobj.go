package gitscan

import (
	"bytes"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// rawCommit is the part of a commit object a walk needs.
type rawCommit struct {
	tree    plumbing.Hash
	parents []plumbing.Hash
}

var errBadCommit = errors.New("malformed commit object")

// parseCommitHeader reads the tree and parent lines of a commit object
// as git does: the tree is the first header and the parents are the
// parent headers right after it (a parent header further down is not a
// parent).
func parseCommitHeader(b []byte) (rawCommit, error) {
	var c rawCommit
	line, b, _ := bytes.Cut(b, []byte("\n"))
	hex, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok {
		return c, errBadCommit
	}
	if c.tree, ok = parseHex(hex); !ok {
		return c, errBadCommit
	}
	for {
		line, b, _ = bytes.Cut(b, []byte("\n"))
		hex, ok := bytes.CutPrefix(line, []byte("parent "))
		if !ok {
			return c, nil
		}
		h, ok := parseHex(hex)
		if !ok {
			return c, errBadCommit
		}
		c.parents = append(c.parents, h)
	}
}

// parseCommitMeta reads the author, author date and subject of a commit
// object as go-git's object.Commit.Decode (Repo.Commit) does: the author
// is the header that follows the tree header and the parent headers after
// it, when it is one (a later author header is ignored), its name, email and date decoded by
// object.Signature; the message follows the first empty line, and the
// subject is its first line, trimmed.
func parseCommitMeta(b []byte) CommitMeta {
	var m CommitMeta
	state := 0 // 0: the tree header, 1: parent headers, 2: past the author's place
	for len(b) > 0 {
		var line []byte
		line, b = cutLine(b)
		if len(line) == 0 { // the message follows
			subject, _, _ := bytes.Cut(b, []byte("\n"))
			m.Subject = string(bytes.TrimSpace(subject))
			break
		}
		key, data, _ := bytes.Cut(line, []byte(" "))
		switch {
		case state == 0:
			state = 1
		case state == 1 && string(key) == "parent":
		case state == 1:
			state = 2
			if string(key) == "author" {
				var sig object.Signature
				sig.Decode(data)
				m.Author, m.Email, m.When = sig.Name, sig.Email, sig.When
			}
		}
	}
	return m
}

// cutLine splits b at its first newline: the line before it and the rest
// after it (nil when b holds one line).
func cutLine(b []byte) (line, rest []byte) {
	if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
		return b[:nl], b[nl+1:]
	}
	return b, nil
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 40 {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(b[2*i])
		lo, ok2 := unhex(b[2*i+1])
		if !ok1 || !ok2 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// treeEntry is one entry of a raw tree object.
type treeEntry struct {
	mode uint32
	hash plumbing.Hash
}

const (
	modeDir     = 0o040000
	modeFile    = 0o100000 // regular (0o100644) and executable (0o100755)
	modeMask    = 0o170000
	modeSymlink = 0o120000
)

var errBadTree = errors.New("malformed tree object")

// findTreeEntry scans a raw tree object for name.
func findTreeEntry(b []byte, name string) (treeEntry, bool, error) {
	var found treeEntry
	errFound := errors.New("found")
	err := eachTreeEntry(b, func(n string, e treeEntry) error {
		if n == name {
			found = e
			return errFound
		}
		return nil
	})
	switch err {
	case errFound:
		return found, true, nil
	case nil:
		return treeEntry{}, false, nil
	}
	return treeEntry{}, false, err
}

// eachTreeEntry calls fn for every entry of a raw tree object.
func eachTreeEntry(b []byte, fn func(name string, e treeEntry) error) error {
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return errBadTree
		}
		nul := bytes.IndexByte(b[sp:], 0)
		if nul < 0 || sp+nul+21 > len(b) {
			return errBadTree
		}
		nul += sp
		var e treeEntry
		for _, c := range b[:sp] {
			if c < '0' || c > '7' {
				return errBadTree
			}
			e.mode = e.mode<<3 | uint32(c-'0')
		}
		copy(e.hash[:], b[nul+1:nul+21])
		if err := fn(string(b[sp+1:nul]), e); err != nil {
			return err
		}
		b = b[nul+21:]
	}
	return nil
}
