package changelog

import (
	"testing"
)

// BenchmarkVerify measures Verify on the last commit of the shipped real
// corpus (a one-commit PR adding one entry to a 6380-line changelog),
// inputs already read; see bench/verify.sh for the cold-process numbers.
func BenchmarkVerify(b *testing.B) {
	r := openCorpus(b)
	head, _ := r.Resolve("main")
	c, _ := r.Commit(head)
	for _, p := range Profiles {
		b.Run(string(p), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				in := inputAt(b, r, c.Parents[0], head, "HEAD~1", "HEAD")
				in.PR = 2707
				if rep := Verify(in, p); !rep.OK() {
					b.Fatal(rep.Findings)
				}
			}
		})
	}
}
