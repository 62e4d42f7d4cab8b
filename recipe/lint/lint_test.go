package lint

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/perflog/perflog/recipe/revfs"
)

// found renders findings as "rule:line" for comparison.
func found(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d", f.Rule, f.Line))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestLint(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"clobber after growth", `ARGS=(--a)
ARGS+=(--b)
if [ "$X" = 1 ]; then
  ARGS+=(--c)
fi
ARGS=(--d)
serve "${ARGS[@]}"
`, "recipe/array-clobber:6"},
		{"reset before growth is fine", `ARGS=(--a)
ARGS=(--b)
ARGS+=(--c)
serve "${ARGS[@]}"
`, ""},
		{"reset in the other arm of the same if", `if [ "$X" = 1 ]; then
  ARGS+=(--c)
else
  ARGS=(--d)
fi
serve "${ARGS[@]}"
`, ""},
		{"reset never used afterwards", `ARGS+=(--c)
serve "${ARGS[@]}"
ARGS=()
`, ""},
		{"reset inside a function does not clobber the global", `ARGS+=(--c)
f() {
  ARGS=(--x)
}
serve "${ARGS[@]}"
`, ""},
		{"backslash then space in an array", "ARGS=(\n  --a \\ \n  --b\n)\nserve \"${ARGS[@]}\"\n", "recipe/continuation-whitespace:2"},
		{"backslash then tab ends a command", "serve --a \\\t\n  --b\n", "recipe/continuation-whitespace:1"},
		{"a CRLF line ending after the backslash", "serve --a \\\r\n  --b\r\n", "recipe/continuation-whitespace:1"},
		{"an escaped space mid-line is intended", "echo a\\ b c\n", ""},
		{"git apply", "cd /sgl && git apply /w/fix.patch\n", "recipe/engine-patch:1"},
		{"a patch of a tool the script checked out", "git clone https://github.com/NVIDIA/srt-slurm.git \"$SRT_REPO_DIR\"\ncd \"$SRT_REPO_DIR\" || exit 1\ngit show abc -- src/x.sh | git apply - || exit 1\npatch -p1 -d \"$SRT_REPO_DIR\" < fix.patch\n", ""},
		{"a patch of an engine checkout", "git clone https://github.com/sgl-project/sglang /sgl\ncd /sgl\ngit apply /w/fix.patch\n", "recipe/engine-patch:3"},
		{"a tool checkout, then the engine", "git clone https://github.com/NVIDIA/srt-slurm.git /srt\ncd /srt\ncd /usr/lib/python3/dist-packages/vllm\ngit apply /w/fix.patch\n", "recipe/engine-patch:4"},
		{"sed on site-packages", "sed -i 's/a/b/' /usr/lib/python3/dist-packages/vllm/x.py\n", "recipe/engine-patch:1"},
		{"pip install of an engine wheel", "pip install /w/vllm-0.1.whl\n", "recipe/engine-patch:1"},
		{"pip install of a tool is fine", "pip install pandas\n", ""},
		{"does not parse", "if then fi (\n", "recipe/parse:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Parse("x.sh", []byte(tc.src))
			if got := found(Lint(s)); got != tc.want {
				t.Errorf("Lint = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseAssociativeArrayKeys(t *testing.T) {
	s := Parse("x.sh", []byte(`declare -A M=(
  [1024:4:4:false:4]=4
)
N="${M[${ISL}:${TP}]:-3}"
ARGS=(--n "$N")
ARGS=(--m)
serve "${ARGS[@]}"
`))
	if s.ParseErr != nil {
		t.Fatalf("ParseErr = %v", s.ParseErr)
	}
	if len(s.Env) == 0 || s.Env[0].Name != "N" {
		t.Fatalf("Env = %+v", s.Env)
	}
}

func TestCheckRuns(t *testing.T) {
	const kv = `case "$KV_OFFLOAD_BACKEND" in
  hicache) require_agentic_kv_offload_backend hicache ;;
  lmcache) require_agentic_kv_offload_backend lmcache ;;
esac
`
	const fixed = "require_agentic_kv_offload_backend mooncake\n"
	const router = `USE_ROUTER=false
if [ "$DP_ATTENTION" = "true" ]; then
  USE_ROUTER=true
fi
if [ "$USE_ROUTER" = "true" ]; then
  python3 -m sglang_router.launch_router --dp-aware &
fi
`
	const routerAlways = "python3 -m sglang_router.launch_router --dp-aware &\n"
	dram := func(b string, dpa bool) Run {
		return Run{Key: "k", File: "configs/m.yaml", Line: 9, KVOffloading: "dram", KVBackend: b, DPAttn: dpa}
	}
	for _, tc := range []struct {
		name, src string
		runs      []Run
		want      string
	}{
		{"backend handled by a case arm", kv, []Run{dram("lmcache", true)}, ""},
		{"backend no arm handles", kv, []Run{dram("mooncake", true)}, "recipe/kv-backend-mismatch:2"},
		{"unconditional requirement matches", fixed, []Run{dram("mooncake", true)}, ""},
		{"unconditional requirement differs", fixed, []Run{dram("hicache", true)}, "recipe/kv-backend-mismatch:1"},
		{"no offload: nothing required", fixed, []Run{{Key: "k", KVOffloading: "none", KVBackend: "hicache"}}, ""},
		{"pass-through argument", "require_agentic_kv_offload_backend \"$B\"\n", []Run{dram("x", true)}, ""},
		{"router gated through a variable set under DP_ATTENTION", router, []Run{dram("", false)}, ""},
		{"router always on, a point without DP attention", routerAlways, []Run{dram("", true), dram("", false)}, "recipe/router-mismatch:1"},
		{"router always on, every point with DP attention", routerAlways, []Run{dram("", true)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Parse("x.sh", []byte(tc.src))
			if s.ParseErr != nil {
				t.Fatal(s.ParseErr)
			}
			if got := found(CheckRuns(s, tc.runs)); got != tc.want {
				t.Errorf("CheckRuns = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzLint: any input parses or fails cleanly, and the lint never panics.
func FuzzLint(f *testing.F) {
	for _, seed := range []string{
		"ARGS=(--a)\nARGS+=(--b)\nARGS=(--c)\nserve \"${ARGS[@]}\"\n",
		"serve --a \\ \n --b\n",
		"case \"$KV_OFFLOAD_BACKEND\" in\n a) require_agentic_kv_offload_backend a;;\n *) ;;\nesac\n",
		"declare -A M=(\n [1:2]=3\n)\necho ${M[1:2]}\n",
		"f() { X=(1); X+=(2); }\nif a; then b; elif c; then d; else e; fi\n",
		"source \"$(dirname \"$0\")/../lib.sh\"\ngit apply x.patch\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s := Parse("f.sh", []byte(src))
		Lint(s)
		CheckRuns(s, []Run{{Key: "k", KVOffloading: "dram", KVBackend: "x"}, {Key: "k", DPAttn: false}})
		s.FlagNames()
	})
}

// A script over MaxScriptSize is not parsed (it counts as one that does
// not parse): parsing 100 MB took gigabytes.
func TestParseTooLarge(t *testing.T) {
	s := Parse("big.sh", bytes.Repeat([]byte("echo x\n"), revfs.MaxScriptSize/7+1))
	if s.ParseErr == nil || !strings.Contains(s.ParseErr.Error(), "over the 4 MiB") || s.File != nil {
		t.Fatalf("ParseErr %v", s.ParseErr)
	}
}

// TestParseExports: which assignments reach a command's environment.
func TestParseExports(t *testing.T) {
	sc := Parse("x.sh", []byte(`PORT_A=1
export B_ONE=2
C_TWO=3
export C_TWO
declare -x D_THREE=4
E_FOUR=5 vllm serve
local F_FIVE=6
`))
	got := map[string]bool{}
	for _, e := range sc.Env {
		got[e.Name] = e.Export
	}
	want := map[string]bool{"PORT_A": false, "B_ONE": true, "C_TWO": false, "D_THREE": true, "E_FOUR": true, "F_FIVE": false}
	if !maps.Equal(got, want) {
		t.Errorf("Export by name = %v, want %v", got, want)
	}
	if !slices.Equal(sc.Exported, []string{"C_TWO"}) || sc.AllExport {
		t.Errorf("Exported = %q, AllExport = %v; want [C_TWO], false", sc.Exported, sc.AllExport)
	}
	for _, src := range []string{"set -a\nX=1\n", "set -eua\n", "set -o allexport\n"} {
		if !Parse("y.sh", []byte(src)).AllExport {
			t.Errorf("%q: AllExport false", src)
		}
	}
	if Parse("z.sh", []byte("set -eux\nset -- --a\n")).AllExport {
		t.Error("set -eux: AllExport true")
	}
}
