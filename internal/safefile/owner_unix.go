//go:build unix

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

type fileOwner struct{ uid, gid int }

func ownerOf(fi fs.FileInfo) *fileOwner {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &fileOwner{int(st.Uid), int(st.Gid)}
}

// mine says whether a file the process creates gets this owner anyway.
func (o *fileOwner) mine() bool { return o.uid == os.Geteuid() && o.gid == os.Getegid() }

// alive says whether a process pid exists (signal 0 checks, sends nothing).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
