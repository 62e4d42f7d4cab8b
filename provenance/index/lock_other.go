//go:build !unix

package index

import "context"

// lockFile is SQLite's own locking alone here.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
