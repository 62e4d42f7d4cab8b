package index

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflog/perflog/provenance"
	"golang.org/x/tools/txtar"
)

// TestWalkLaunchesStoresEachWalk: the recipes walked by the index (a
// recipe added, one renamed, changes to a shared helper, a launcher and a
// script) are stored as each recipe's walk alone finds them.
func TestWalkLaunchesStoresEachWalk(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/launches.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	s := newScript(t)
	base := map[string]string{}
	for name, data := range files {
		if !strings.HasPrefix(name, "patches/") {
			base[name] = data
		}
	}
	s.commitFiles("Initial recipes (#11)", base)
	s.commitFiles("Decode steps in the shared helper (#12)", map[string]string{"benchmarks/benchmark_lib.sh": files["patches/lib-steps.sh"]})
	s.commitFiles("Export SGLANG_X from the launcher (#13)", map[string]string{"runners/launch_b200-nb.sh": files["patches/launcher-env.sh"]})
	master := base["configs/nvidia-master.yaml"] + files["patches/k3.yaml"]
	s.commitFiles("Add k3 (#14)", map[string]string{"configs/nvidia-master.yaml": master,
		"benchmarks/single_node/fixed_seq_len/k3_fp8_b200.sh": files["patches/k3.sh"]})
	s.commitFiles("Rename k2 (#15)", map[string]string{"configs/nvidia-master.yaml": strings.Replace(master, "k2-fp8-h200-sglang:", "k2-fp8-h200-sglang-v2:", 1)})
	head := s.commitFiles("Rows for k1 (#16)", map[string]string{"benchmarks/single_node/fixed_seq_len/k1_fp8_b200.sh": files["patches/k1-row.sh"]})

	ctx := context.Background()
	ix := newIndex(t)
	n, err := ix.WalkLaunches(ctx, s.repo, head, Options{}, nil)
	if err != nil || n != 3 {
		t.Fatalf("WalkLaunches: %d recipes, %v", n, err)
	}
	h, _, err := ix.History(ctx, s.repo, head, provenance.PartRecipes, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range h.RecipeKeysAt(len(h.Chain) - 1) {
		alone, err := h.LaunchesFrom(ctx, k, head, provenance.LaunchOptions{Repo: s.repo}, nil)
		if err != nil {
			t.Fatal(err)
		}
		stored := ix.LaunchState(ctx, k)
		if stored == nil {
			t.Fatalf("%s: no stored walk", k)
		}
		want, _ := json.Marshal(alone.Versions)
		got, _ := json.Marshal(stored.Versions)
		if string(got) != string(want) {
			t.Errorf("%s: stored walk\n%s\nwalked alone\n%s", k, got, want)
		}
		if k == "k2-fp8-h200-sglang-v2" && (len(alone.Versions) == 0 || alone.Versions[0].Key != "k2-fp8-h200-sglang") {
			t.Errorf("%s: the walk does not reach back through the rename: %s", k, want)
		}
		if k == "k1-fp8-b200-sglang" && len(alone.Versions) != 4 {
			t.Errorf("%s: %d launch versions, want 4 (#11, and the helper, launcher and script changes)", k, len(alone.Versions))
		}
	}
}
