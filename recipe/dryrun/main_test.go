package dryrun

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	ServeIfWorker()
	os.Exit(m.Run())
}

// confined is a sandbox of workers of this test binary (spy: a worker
// dies on any file-system system call).
func confined(t testing.TB, spy bool) *Sandbox {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sb := Confined(spy, exe, WorkerArg)
	t.Cleanup(func() { sb.Close() })
	return sb
}
