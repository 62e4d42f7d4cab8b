package pack

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// smallPackRepo makes a repository of a few commits (blobs stored whole
// and as deltas) packed into one pack, and returns its git directory and
// every object's content and type by id.
func smallPackRepo(t testing.TB) (string, map[plumbing.Hash][]byte, map[plumbing.Hash]plumbing.ObjectType) {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	text := bytes.Repeat([]byte("- config-keys:\n    - k1-fp8-b200-vllm\n  description:\n    - \"Update\"\n"), 40)
	for i := range 4 {
		text = append(text, []byte("  pr-link: https://github.com/o/r/pull/"+string(rune('1'+i))+"\n")...)
		if err := os.WriteFile(filepath.Join(dir, "perf-changelog.yaml"), text, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Add("perf-changelog.yaml"); err != nil {
			t.Fatal(err)
		}
		sig := &object.Signature{Name: "a", Email: "a@b", When: time.Unix(int64(1e9+i), 0)}
		if _, err := w.Commit("change "+string(rune('1'+i)), &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.RepackObjects(&git.RepackConfig{}); err != nil {
		t.Fatal(err)
	}
	want := map[plumbing.Hash][]byte{}
	types := map[plumbing.Hash]plumbing.ObjectType{}
	iter, err := r.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		t.Fatal(err)
	}
	iter.ForEach(func(o plumbing.EncodedObject) error {
		rd, err := o.Reader()
		if err != nil {
			return err
		}
		var b bytes.Buffer
		b.ReadFrom(rd)
		rd.Close()
		want[o.Hash()] = b.Bytes()
		types[o.Hash()] = o.Type()
		return nil
	})
	// leave the pack alone: no loose copies
	os.RemoveAll(filepath.Join(dir, ".git", "objects", "info"))
	ents, _ := os.ReadDir(filepath.Join(dir, ".git", "objects"))
	for _, e := range ents {
		if e.Name() != "pack" {
			os.RemoveAll(filepath.Join(dir, ".git", "objects", e.Name()))
		}
	}
	return filepath.Join(dir, ".git"), want, types
}

// edit applies a fuzzer's edits to a file's bytes: each three bytes of
// edits are an operation and an offset (set the byte there to the
// operation's, insert it, or delete the byte there), and cut, when
// non-zero, truncates the result. The fuzzer's input stays small (a
// pack's or an index's whole bytes as the input made the fuzzer spend
// its time minimizing kilobytes, and find nothing).
func edit(orig []byte, cut uint16, edits []byte) []byte {
	data := bytes.Clone(orig)
	for i := 0; i+2 < len(edits) && len(data) > 0; i += 3 {
		op, at := edits[i], (int(edits[i+1])<<8|int(edits[i+2]))%len(data)
		switch op % 4 {
		case 0:
			data = append(data[:at:at], data[at+1:]...)
		case 1:
			data = append(data[:at:at], append([]byte{op}, data[at:]...)...)
		default:
			data[at] = op
		}
	}
	if cut > 0 && int(cut) < len(data) {
		data = data[:cut]
	}
	return data
}

// FuzzReader: whatever the bytes of a pack (its index kept), reading its
// objects gives each object's content, an error, or an object of another
// type (which gitscan's typed readers refuse), never a panic and never
// other content of the type asked for: inflating verifies the checksum,
// commits and trees their ids.
func FuzzReader(f *testing.F) {
	gitDir, want, types := smallPackRepo(f)
	packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		f.Fatalf("packs: %v", packs)
	}
	orig, err := os.ReadFile(packs[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(0), []byte{})
	for _, at := range []int{12, 20, 40, len(orig) / 2, len(orig) - 30} {
		f.Add(uint16(0), []byte{orig[at] ^ 0x10 | 2, byte(at >> 8), byte(at)})
	}
	f.Add(uint16(len(orig)/2), []byte{})
	f.Fuzz(func(t *testing.T, cut uint16, edits []byte) {
		data := edit(orig, cut, edits)
		if err := os.WriteFile(packs[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		bad := readAll(t, gitDir, want, types)
		if bytes.Equal(data, orig) && bad > 0 {
			t.Fatal("the intact pack reads with errors")
		}
	})
}

// FuzzIndex: whatever the bytes of a pack's index (its pack kept), its
// objects read as their content, as ErrNotFound (left to go-git) or as an
// error, never as a panic or other content.
func FuzzIndex(f *testing.F) {
	gitDir, want, types := smallPackRepo(f)
	idxs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
	if len(idxs) != 1 {
		f.Fatalf("indexes: %v", idxs)
	}
	orig, err := os.ReadFile(idxs[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(0), []byte{})
	for _, at := range []int{5, 8 + 4*0x30, 8 + 256*4 + 3, len(orig) - 50, len(orig) - 45} {
		f.Add(uint16(0), []byte{orig[at] ^ 0x40 | 2, byte(at >> 8), byte(at)})
	}
	f.Add(uint16(len(orig)/2), []byte{})
	f.Fuzz(func(t *testing.T, cut uint16, edits []byte) {
		data := edit(orig, cut, edits)
		if err := os.WriteFile(idxs[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		bad := readAll(t, gitDir, want, types)
		if bytes.Equal(data, orig) && bad > 0 {
			t.Fatal("the intact index reads with errors")
		}
	})
}

// readAll reads every object of want through a fresh Set of gitDir,
// failing t on content other than want's for the type read, and returns
// how many objects did not read as themselves.
func readAll(t *testing.T, gitDir string, want map[plumbing.Hash][]byte, types map[plumbing.Hash]plumbing.ObjectType) int {
	s := OpenSet(filepath.Join(gitDir, "objects"))
	defer s.Close()
	r := NewReader(s, 1<<10)
	bad := 0
	for h, content := range want {
		typ, got, err := r.Read(h)
		if err != nil || typ != types[h] {
			bad++ // an error, or a type the typed readers refuse
			continue
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("object %s read as other content", h)
		}
	}
	return bad
}
