//go:build !unix

package safefile

import "io/fs"

type fileOwner struct{ uid, gid int }

func ownerOf(fs.FileInfo) *fileOwner { return nil }

func (o *fileOwner) mine() bool { return true }

// alive cannot tell here: a temporary file is kept.
func alive(int) bool { return true }
