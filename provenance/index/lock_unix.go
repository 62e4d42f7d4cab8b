//go:build unix

package index

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive lock on name (created if needed), waiting
// for another process that holds it while ctx lasts, at most busyWait.
// Index writers (a build, an update, a rebuild that removes the files)
// take it, so that two never work on the files at once.
func lockFile(ctx context.Context, name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		// a read-only directory: SQLite's own locking is all there is
		return func() {}, nil
	}
	deadline := time.Now().Add(busyWait)
	pause := 5 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return func() {}, nil // no locking on this file system
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another perflog has been updating %s for over %s", name, busyWait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}
