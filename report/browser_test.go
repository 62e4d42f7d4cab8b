package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
)

// BrowserEnv names the environment variable that runs the browser test
// and makes it fail, rather than skip, when no Chromium is installed
// (.ci/run sets it when it has one). It runs with the long tests too; a
// plain go test ./... skips it: Chromium costs it 9 s.
const BrowserEnv = "PERFLOG_BROWSER_TESTS"

// ScreenshotsEnv, when set, names a directory the browser test copies its
// screenshots into (docs/ keeps those of the sample).
const ScreenshotsEnv = "PERFLOG_SCREENSHOTS"

const browserKey = "dsr1-fp8-mi355x-sglang"

func chromium(t *testing.T) string {
	if os.Getenv(BrowserEnv) == "" && !testcorpus.Long() {
		t.Skipf("the browser test runs with %s=1 or %s=1 (.ci/run sets them)", BrowserEnv, testcorpus.LongEnv)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(BrowserEnv) != "" {
		t.Fatalf("%s is set and no Chromium is installed (apt-get install chromium)", BrowserEnv)
	}
	t.Skipf("no Chromium installed: the report is not checked in a browser (apt-get install chromium; .ci/run does)")
	return ""
}

// browse runs headless Chromium on a page of the site with args (its
// --dump-dom or --screenshot) and returns what it printed.
func browse(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--disable-extensions", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// TestReportInBrowser renders the sample's report (one recipe, with its
// launch history) in headless Chromium: the DOM the browser built carries
// the site's numbers and rows, its links lead to pages and ids that exist
// or to the repository on GitHub, and the screenshots show the page and
// the timeline's marks.
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	r, head := testcorpus.Open(t, nil)
	src, err := index.OpenSource(r, index.SourceOptions{Rev: head.String(), NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	settings := &config.Settings{}
	site, err := Build(context.Background(), src, settings, Options{Key: browserKey, Launches: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Write(site, dir); err != nil {
		t.Fatal(err)
	}
	if len(site.Recipes) != 1 || !site.Recipes[0].Launches {
		t.Fatalf("the report of %s has %d recipes (want 1, with its launch history)", browserKey, len(site.Recipes))
	}
	rc := site.Recipes[0]

	doms := map[string]*html.Node{}
	for _, name := range []string{"index.html", rc.Page} {
		out := browse(t, bin, filepath.Join(dir, filepath.FromSlash(name)), "--dump-dom")
		doc, err := html.Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		doms[name] = doc
	}

	// the overview's cards are the model's numbers
	cards := map[string]string{}
	walk(doms["index.html"], func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "div" && n.Parent != nil && n.Parent.Data == "dl" {
			var dt, dd string
			walk(n, func(c *html.Node) {
				switch c.Data {
				case "dt":
					dt = text(c)
				case "dd":
					dd = text(c)
				}
			})
			cards[dt] = dd
		}
	})
	for label, want := range map[string]int{"Entries audited": len(site.Audit.Entries), "Contradicted claims": len(site.Claims),
		"Commits without an entry": len(site.Missing), "Lint findings": len(site.Findings), "Recipes": 1} {
		if cards[label] != strconv.Itoa(want) {
			t.Errorf("overview card %q shows %q, want %d (cards: %v)", label, cards[label], want, cards)
		}
	}

	// the recipe page: a row per commit of its history, a mark per lane
	// it changed, each mark a link to its row
	rows, marks := 0, 0
	var decodeSteps string
	walk(doms[rc.Page], func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if id, _ := attr(n, "id"); n.Data == "tr" && strings.HasPrefix(id, "c-") {
			rows++
			if tx := text(n); strings.Contains(tx, "launch.flags.--num-continuous-decode-steps: 4 → 8") {
				decodeSteps = tx
			}
		}
		if c, _ := attr(n, "class"); n.Data == "a" && c == "mark" {
			marks++
		}
	})
	if rows != len(rc.Items) {
		t.Errorf("the history table has %d rows, want one per commit (%d)", rows, len(rc.Items))
	}
	if tl := timeline(rc); marks != len(tl.Marks) || marks == 0 {
		t.Errorf("the timeline shows %d marks, want %d", marks, len(tl.Marks))
	}
	// #1243 changed the script's flag without touching the config (the
	// case that made provenance follow launches)
	if !strings.Contains(decodeSteps, "#1243") {
		t.Errorf("no row of #1243 with --num-continuous-decode-steps 4 → 8; the row with the change reads %q", decodeSteps)
	}

	// every link leads somewhere: a page and id of the site, or GitHub
	// (entries link the repository by its former names too)
	for name, doc := range doms {
		walk(doc, func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "script" {
				t.Errorf("%s: the browser's DOM has a script element", name)
			}
		})
	}
	var github []string
	for _, n := range settings.RepositoryNames() {
		github = append(github, "https://github.com/"+n+"/")
	}
	if checked := checkLinks(t, dir, doms, github); checked < 20 {
		t.Errorf("only %d links checked", checked)
	}

	// the screenshots: the page is drawn, and the recipe's timeline shows
	// its change marks and its changelog marks
	shots := t.TempDir()
	for _, s := range []struct {
		name, page string
		colours    []color.RGBA
	}{
		{"report-overview.png", "index.html", nil},
		{"report-recipe.png", rc.Page, []color.RGBA{{0x0a, 0x54, 0xc2, 0xff}, {0x11, 0x63, 0x29, 0xff}}},
	} {
		png := filepath.Join(shots, s.name)
		browse(t, bin, filepath.Join(dir, filepath.FromSlash(s.page)), "--window-size=1280,1400", "--screenshot="+png)
		img := readPNG(t, png)
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1400 {
			t.Errorf("%s is %dx%d, want 1280x1400", s.name, b.Dx(), b.Dy())
		}
		if ink := inked(img); ink < 0.01 {
			t.Errorf("%s: %.2f%% of the pixels are not white: the page did not render", s.name, ink*100)
		}
		for _, c := range s.colours {
			if !hasColour(img, c) {
				t.Errorf("%s: no pixel of #%02x%02x%02x: the timeline's marks are not drawn", s.name, c.R, c.G, c.B)
			}
		}
		if to := os.Getenv(ScreenshotsEnv); to != "" {
			data, err := os.ReadFile(png)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, s.name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func readPNG(t *testing.T, name string) image.Image {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", name, err))
	}
	return img
}

// inked is the share of pixels that are not white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r>>8 < 0xf0 || g>>8 < 0xf0 || bl>>8 < 0xf0 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// hasColour reports whether a pixel is c (to within rounding).
func hasColour(img image.Image, c color.RGBA) bool {
	near := func(a uint32, b uint8) bool { d := int(a>>8) - int(b); return d >= -2 && d <= 2 }
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, c.R) && near(g, c.G) && near(bl, c.B) {
				return true
			}
		}
	}
	return false
}

// TestLongValuesWrapInBrowser: a value of a thousand characters without a
// space (a --compilation-config JSON) wraps inside the history table
// instead of widening it past the page: in Chromium at 1280 pixels, no
// table scrolls sideways and neither does the page. (The measuring script
// is added to a copy of the page; the site itself has none.)
func TestLongValuesWrapInBrowser(t *testing.T) {
	bin := chromium(t)
	s := hostile()
	long := `{"cudagraph_capture_sizes":[` + strings.Repeat("1,2,4,8,16,", 100) + `512]}`
	r := s.Recipes[0]
	r.Items[0].Changes = append(r.Items[0].Changes, provenance.FieldChange{Kind: config.Changed,
		Path: "launch.flags.--compilation-config", Old: long, New: long[:500] + "]}"})
	r.Items[0].Entries = []provenance.LogEntry{{Event: provenance.EvIntroduced, PRLink: "https://github.com/o/r/pull/" + strings.Repeat("9", 300)}}
	dir := t.TempDir()
	if _, err := Write(s, dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.Page)))
	if err != nil {
		t.Fatal(err)
	}
	const measure = `<script>document.title = "overflow:" + [...document.querySelectorAll(".scroll")].map(e => e.scrollWidth - e.clientWidth).join(",") +
		";page:" + (document.documentElement.scrollWidth - document.documentElement.clientWidth)</script>`
	copyPath := filepath.Join(t.TempDir(), "measured.html")
	if err := os.WriteFile(copyPath, bytes.Replace(page, []byte("</body>"), []byte(measure+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(browse(t, bin, copyPath, "--window-size=1280,1400", "--dump-dom")))
	if err != nil {
		t.Fatal(err)
	}
	var title string
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "title" && n.Parent != nil && n.Parent.Data == "head" {
			title = text(n)
		}
	})
	tables, pageOver, ok := strings.Cut(strings.TrimPrefix(title, "overflow:"), ";page:")
	if !ok || tables == "" {
		t.Fatalf("the measuring script did not run: title %q", title)
	}
	for _, over := range strings.Split(tables, ",") {
		if over != "0" {
			t.Errorf("a table scrolls sideways by %s px (all: %s)", over, tables)
		}
	}
	if pageOver != "0" {
		t.Errorf("the page scrolls sideways by %s px", pageOver)
	}
}
