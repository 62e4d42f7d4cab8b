// Command synth writes a synthetic history K times the size of a real one,
// for the index scale benchmark (bench/index.sh): a `git fast-import`
// stream on stdout.
//
//	go run ./bench/synth -k 10 REPO | git -C OUT fast-import --quiet
//
// The real first-parent history is replayed in K tiles: each original
// commit becomes K commits, one per tile; commit (i, t) gives tile t the
// files of original commit i while the tiles after t still hold the
// version before it. Tile t's changelog entries and recipes have their
// keys suffixed with -t<t> and their PR numbers offset by t·100000, so K
// tiles hold K times the entries (one changelog, growing K times larger)
// and K times the recipes (in per-tile master config files, listed in the
// repository's .perflog.yaml). The shape — entries per commit, edits,
// reverts, renames, files that do not load — is the real one. The other
// files (scripts, launchers, workflows: what a recipe's dry run reads)
// are not tiled: each original commit's changes to them land in its
// first tile's commit, so every tile's recipes launch what the real ones
// did, and a launch walk has the real history's script versions.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
)

func main() {
	k := flag.Int("k", 10, "scale factor (tiles)")
	flag.Parse()
	if flag.NArg() != 1 || *k < 1 {
		fmt.Fprintln(os.Stderr, "usage: synth [-k K] REPO | git fast-import")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *k); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
}

var (
	layouts = [][]string{{"configs/amd-master.yaml", "configs/nvidia-master.yaml"},
		{".github/configs/amd-master.yaml", ".github/configs/nvidia-master.yaml"}}
	prNum     = regexp.MustCompile(`\(#(\d+)\)`)
	pullNum   = regexp.MustCompile(`/pull/(\d+)`)
	topKey    = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+):`)
	listedKey = regexp.MustCompile(`^(\s+- )([A-Za-z0-9_.*-]+)(\s*)$`)
)

type version struct {
	changelog string
	configs   [2]string
}

func run(dir string, k int) error {
	r, err := gitscan.Open(dir, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	head, err := r.Resolve("HEAD")
	if err != nil {
		return err
	}
	paths := []string{"perf-changelog.yaml"}
	for _, l := range layouts {
		paths = append(paths, l...)
	}
	type step struct {
		hash  plumbing.Hash
		blobs []plumbing.Hash
	}
	var steps []step
	err = r.Track(context.Background(), gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: head}, Paths: paths},
		func(s gitscan.Step) error {
			steps = append(steps, step{s.Hash, append([]plumbing.Hash(nil), s.Blobs...)})
			return nil
		})
	if err != nil {
		return err
	}
	text := map[plumbing.Hash]string{}
	read := func(h plumbing.Hash) (string, error) {
		if h.IsZero() {
			return "", nil
		}
		if t, ok := text[h]; ok {
			return t, nil
		}
		b, err := r.ReadBlob(h)
		if err != nil {
			return "", err
		}
		text[h] = string(b)
		return text[h], nil
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	settings := "changelog:\n  master-configs:\n"
	for t := 0; t < k; t++ {
		settings += fmt.Sprintf("    - configs/amd-master-t%d.yaml\n    - configs/nvidia-master-t%d.yaml\n", t, t)
	}
	tiled := map[string]bool{".perflog.yaml": true}
	for _, p := range paths {
		tiled[p] = true
	}
	tiles := make([]version, k) // what each tile holds now
	mark := 0
	var prevCommit plumbing.Hash           // the last original commit replayed
	for i := len(steps) - 1; i >= 0; i-- { // oldest first
		st := steps[i]
		var v version
		if v.changelog, err = read(st.blobs[0]); err != nil {
			return err
		}
		for li, l := range layouts {
			_ = l
			if !st.blobs[1+2*li].IsZero() || !st.blobs[2+2*li].IsZero() {
				for f := 0; f < 2; f++ {
					if v.configs[f], err = read(st.blobs[1+2*li+f]); err != nil {
						return err
					}
				}
				break
			}
		}
		c, err := r.Commit(st.hash)
		if err != nil {
			return err
		}
		for t := 0; t < k; t++ {
			old := tiles[t]
			tiles[t] = v
			mark++
			msg := prNum.ReplaceAllStringFunc(c.Message, func(m string) string {
				n, _ := strconv.Atoi(m[2 : len(m)-1])
				return fmt.Sprintf("(#%d)", n+t*100000)
			})
			when := c.When.Unix() + int64(t)
			fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\n", mark)
			fmt.Fprintf(w, "author %s <%s> %d +0000\ncommitter %s <%s> %d +0000\n", c.Author, c.Email, when, c.Author, c.Email, when)
			fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
			if mark > 1 {
				fmt.Fprintf(w, "from :%d\n", mark-1)
			} else {
				writeFile(w, ".perflog.yaml", settings)
			}
			if t == 0 {
				// the untiled files: this commit's changes since the last
				// one replayed
				changes, err := r.ChangedFiles(prevCommit, st.hash)
				if err != nil {
					return err
				}
				for _, ch := range changes {
					switch {
					case tiled[ch.Path]:
					case ch.New.IsZero():
						fmt.Fprintf(w, "D %s\n", ch.Path)
					default:
						b, err := r.ReadBlob(ch.New)
						if err != nil {
							return err
						}
						writeFile(w, ch.Path, string(b))
					}
				}
				prevCommit = st.hash
			}
			if old.changelog != v.changelog {
				var all strings.Builder
				for u := 0; u < k; u++ {
					if s := tileChangelog(tiles[u].changelog, u); s != "" {
						if all.Len() > 0 {
							all.WriteString("\n")
						}
						all.WriteString(s)
					}
				}
				writeFile(w, "perf-changelog.yaml", all.String())
			}
			for f, name := range []string{"amd", "nvidia"} {
				if old.configs[f] != v.configs[f] {
					writeFile(w, fmt.Sprintf("configs/%s-master-t%d.yaml", name, t), tileConfig(v.configs[f], t))
				}
			}
		}
	}
	return nil
}

func writeFile(w *bufio.Writer, path, content string) {
	fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
}

// tileChangelog suffixes the config-keys and offsets the pr-links of a
// changelog for tile t.
func tileChangelog(s string, t int) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	inKeys := false
	for _, line := range strings.SplitAfter(s, "\n") {
		trim := strings.TrimRight(line, "\n")
		switch {
		case strings.HasSuffix(strings.TrimSpace(trim), "config-keys:"):
			inKeys = true
		case inKeys && listedKey.MatchString(trim):
			trim = listedKey.ReplaceAllString(trim, fmt.Sprintf("${1}${2}-t%d${3}", t))
			line = trim + line[len(strings.TrimRight(line, "\n")):]
		default:
			inKeys = false
		}
		if strings.Contains(line, "pr-link") {
			line = pullNum.ReplaceAllStringFunc(line, func(m string) string {
				n, _ := strconv.Atoi(m[6:])
				return fmt.Sprintf("/pull/%d", n+t*100000)
			})
		}
		b.WriteString(line)
	}
	return b.String()
}

// tileConfig suffixes the recipe keys of a master config for tile t.
func tileConfig(s string, t int) string {
	return topKey.ReplaceAllString(s, fmt.Sprintf("${1}-t%d:", t))
}
