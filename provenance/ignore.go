package provenance

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// IgnoreRevs resolves the revisions a history looks through: the
// settings' ignore-revs, the lines of their ignore-revs-file as it is at
// rev ('#' starts a comment), then extra (--ignore-rev). An error names
// where the revision that does not resolve is listed.
func IgnoreRevs(r *gitscan.Repo, rev plumbing.Hash, s *config.Settings, extra []string) ([]plumbing.Hash, error) {
	type named struct{ rev, from string }
	var revs []named
	if s != nil {
		for _, x := range s.IgnoreRevs {
			revs = append(revs, named{x, "ignore-revs in the settings"})
		}
		if p := s.IgnoreRevsFile; p != "" {
			data, err := r.ReadFile(rev, p)
			if err != nil {
				return nil, fmt.Errorf("ignore-revs-file: %w", err)
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			for n := 1; sc.Scan(); n++ {
				l, _, _ := strings.Cut(sc.Text(), "#")
				if l = strings.TrimSpace(l); l != "" {
					revs = append(revs, named{l, fmt.Sprintf("ignore-revs-file %s:%d", p, n)})
				}
			}
		}
	}
	for _, x := range extra {
		revs = append(revs, named{x, "ignore-rev"})
	}
	out := make([]plumbing.Hash, 0, len(revs))
	for _, x := range revs {
		h, err := r.Resolve(x.rev)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x.from, err)
		}
		out = append(out, h)
	}
	return out, nil
}
