package index

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe/dryrun"
)

// A repository whose entries make claims: the recipes, the script that
// runs them, and the files that resolve one to the other.
var checkFiles = map[string]string{
	"configs/nvidia-master.yaml": `k1-fp8-b200-vllm:
  image: vllm/vllm-openai:v0.11.0
  model: m1
  model-prefix: k1
  runner: b200
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
`,
	"configs/runners.yaml":        "labels:\n  b200: [b200-nb_0]\n",
	"runners/launch_b200-nb.sh":   "#!/bin/bash\nbash \"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200_${FRAMEWORK}.sh\"\n",
	"benchmarks/benchmark_lib.sh": "#!/bin/bash\ncheck_env_vars() { :; }\n",
	"benchmarks/single_node/fixed_seq_len/k1_fp8_b200_vllm.sh": "#!/bin/bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n" +
		"ARGS=(--kv-cache-dtype fp8)\nARGS+=(--max-num-seqs 256)\nARGS=(--seed 1)\nvllm serve \"$MODEL\" \"${ARGS[@]}\"\n",
}

func checkEntry(n int, bullet string) string {
	return fmt.Sprintf("- config-keys:\n    - k1-fp8-b200-vllm\n  description:\n    - %q\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/%d\n", bullet, n)
}

// storedClaims renders the claims table with each entry's position.
func storedClaims(t *testing.T, ix *Index) []string {
	t.Helper()
	res, err := ix.Query(context.Background(), `SELECT e.position, c.bullet, c.kind, c.text, c.verdict, c.sha, c.evidence
		FROM claims c JOIN entries e ON e.id = c.entry`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Rows {
		out = append(out, row(r...))
	}
	sort.Strings(out)
	return out
}

func row(vals ...any) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprint(&b, v)
	}
	return b.String()
}

// auditClaims renders what audit --claims all finds, as storedClaims.
func auditClaims(t *testing.T, s *script, h *provenance.History) []string {
	t.Helper()
	rep, err := h.Audit(provenance.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := s.repo.ReadFile(h.Head, rep.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := provenance.CheckAuditClaims(context.Background(), s.repo, &config.Settings{}, rep, raw, dryrun.Options{}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range rep.Entries {
		for _, c := range e.Claims {
			ev := []byte("[]")
			if len(c.Evidence) > 0 {
				ev, _ = json.Marshal(c.Evidence)
			}
			out = append(out, row(int64(e.Index), int64(c.Bullet), c.Kind, c.Text, c.Verdict, e.Introduced.Commit, string(ev)))
		}
	}
	sort.Strings(out)
	return out
}

// TestIndexChecks: the claims table holds what audit --claims all finds,
// and the findings table what the lint of the head finds; both are filled
// on demand, and later only for what changed.
func TestIndexChecks(t *testing.T) {
	ctx := context.Background()
	s := newScript(t)
	files := map[string]string{"perf-changelog.yaml": checkEntry(1, "Add k1")}
	for p, text := range checkFiles {
		files[p] = text
	}
	s.commitFiles("Add k1 (#1)", files)
	cl := checkEntry(1, "Add k1") + "\n" + checkEntry(2, "Set --max-num-seqs 512 and --kv-cache-dtype fp8")
	s.commit("Tune k1 (#2)", cl)
	ix := newIndex(t)
	h, _, err := ix.Sync(ctx, s.repo, s.head(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedClaims(t, ix); len(got) != 0 {
		t.Fatalf("a sync checked claims: %v", got)
	}
	check := func(want CheckStats) {
		t.Helper()
		o := CheckOptions{Claims: true, Findings: true}
		// Checked says beforehand whether the check has work to do
		if got := ix.Checked(ctx, o); got != (want == CheckStats{}) {
			t.Fatalf("Checked before a check that does %+v: %v", want, got)
		}
		st, err := ix.Check(ctx, s.repo, o)
		if err != nil {
			t.Fatal(err)
		}
		if *st != want {
			t.Fatalf("check did %+v, want %+v", *st, want)
		}
		if !ix.Checked(ctx, o) || !ix.Checked(ctx, CheckOptions{Claims: true}) || !ix.Checked(ctx, CheckOptions{Findings: true}) {
			t.Fatal("Checked is false after a check")
		}
	}
	check(CheckStats{Entries: 2, Claims: 2, Linted: true})
	want := auditClaims(t, s, h)
	if got := storedClaims(t, ix); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("claims table:\n%s\naudit --claims all:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(want, "\n"), "flag | --max-num-seqs 512 | contradicted") {
		t.Fatalf("the contradicted claim is missing: %v", want)
	}
	res, err := ix.Query(ctx, `SELECT rule, file, line FROM findings`)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "recipe/array-clobber" || res.Rows[0][2].(int64) != 5 {
		t.Fatalf("findings: %v %v", res, err)
	}
	// the stored findings are the lint of the head, as read from git
	stored, err := ix.StoredFindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	linted, err := lintAt(s.repo, s.head(), &config.Settings{})
	if err != nil || !reflect.DeepEqual(stored, linted) || len(stored) != 1 {
		t.Fatalf("stored findings %+v, the lint of the head %+v (%v)", stored, linted, err)
	}
	// nothing to do at the same head
	check(CheckStats{})
	// without the stored audit (a damaged chunk), the claims come from the
	// stored history: the same
	for _, q := range []string{`DELETE FROM answers WHERE name GLOB 'audit*'`, `DELETE FROM claims_checked`, `DELETE FROM meta WHERE name = 'claims-head'`} {
		if _, err := ix.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	check(CheckStats{Entries: 2, Claims: 2})
	var n int
	if err := ix.db.QueryRow(`SELECT count(*) FROM answers WHERE name GLOB 'audit*'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the check wrote the index beyond its tables (%d audit rows, %v)", n, err)
	}
	if got := storedClaims(t, ix); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("claims from the stored history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// a new entry: only its claims are checked; the lint runs again
	cl += "\n" + checkEntry(3, "Update the image to vllm/vllm-openai:v0.12.0")
	s.commitFiles("Bump k1 (#3)", map[string]string{"perf-changelog.yaml": cl,
		"configs/nvidia-master.yaml": strings.Replace(checkFiles["configs/nvidia-master.yaml"], "v0.11.0", "v0.12.0", 1)})
	if h, _, err = ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	check(CheckStats{Entries: 1, Claims: 1, Linted: true})
	want = auditClaims(t, s, h)
	if got := storedClaims(t, ix); strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != 3 {
		t.Fatalf("claims table after an update:\n%s\naudit --claims all:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// a rewritten history: the entries are numbered anew, their claims
	// checked again
	s.reset(h.Chain[1])
	s.commit("Tune k1 differently (#4)", cl[:strings.LastIndex(cl, "\n- config-keys")]+"\n"+checkEntry(4, "Set --max-num-seqs 256"))
	if h, _, err = ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	check(CheckStats{Entries: 3, Claims: 3, Linted: true})
	if got, want := storedClaims(t, ix), auditClaims(t, s, h); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("claims table after a rewrite:\n%s\naudit --claims all:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestClaimData: the data column holds a claim as audit --claims prints
// it, without where its entry stands (entry, line), and reads back whole.
func TestClaimData(t *testing.T) {
	c := claims.Result{Claim: claims.Claim{Kind: claims.KindEnv, Text: "set X to 1", Name: "X", Value: "1"},
		Entry: 3, Line: 99, Keys: []string{"k1"}, Verdict: claims.Confirmed, Reason: "set at head",
		Evidence: []claims.Evidence{{File: "a.sh", Line: 2, Text: "export X=1", Rev: "head"}}}
	data, err := claimData(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["entry"]; ok {
		t.Errorf("data holds the entry: %s", data)
	}
	if _, ok := m["line"]; ok {
		t.Errorf("data holds the line: %s", data)
	}
	var back claims.Result
	if err := json.Unmarshal([]byte(data), &back); err != nil {
		t.Fatal(err)
	}
	want := c
	want.Entry, want.Line = 0, 0
	if !reflect.DeepEqual(back, want) {
		t.Errorf("read back %+v, want %+v", back, want)
	}
}
