package changelog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe"
)

// A change that adds more than MaxClaimEntries entries gets the claims of
// the first ones checked and one note for the rest; entries naming the
// same keys share their subject, so the check stays linear.
func TestClaimsCapped(t *testing.T) {
	base := testfs.Revision("v0.11.0", testfs.Script)
	head := testfs.Revision("v0.13.0-cu130", testfs.Script)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	var b strings.Builder
	for i := range MaxClaimEntries + 5 {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "- config-keys:\n    - k1-fp8-b200-vllm\n  description:\n    - \"Update vLLM image from v0.10.0 to v0.13.0\"\n  pr-link: %s%d\n", link, 7)
	}
	rep := Verify(&Input{Base: []byte{}, Head: []byte(b.String()), BaseRev: "base", HeadRev: "head", PR: 7, Change: ch, Settings: s,
		HeadMaster: func() (*config.Master, error) { return ch.Head.Master() }}, ProfileFull)
	capped, contradicted := 0, 0
	for _, f := range rep.Findings {
		switch f.Rule {
		case RuleClaimsCapped:
			capped++
			if !strings.Contains(f.Message, fmt.Sprintf("adds %d entries", MaxClaimEntries+5)) || f.Entry != MaxClaimEntries+1 {
				t.Errorf("note %+v", f)
			}
		case RuleContradicted:
			contradicted++
		}
	}
	if capped != 1 || contradicted != MaxClaimEntries {
		t.Fatalf("%d notes, %d contradictions; want 1 and %d", capped, contradicted, MaxClaimEntries)
	}
}

func TestCheckSize(t *testing.T) {
	if err := CheckSize("c", MaxFileSize); err != nil {
		t.Fatal(err)
	}
	if err := CheckSize("c", MaxFileSize+1); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "32 MiB") {
		t.Fatalf("%v", err)
	}
}

// A cancelled run stops: no claim is checked once the context is done.
func TestVerifyCancelled(t *testing.T) {
	base := testfs.Revision("v0.11.0", testfs.Script)
	head := testfs.Revision("v0.13.0-cu130", testfs.Script)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	entry := "- config-keys:\n    - k1-fp8-b200-vllm\n  description:\n    - \"Update vLLM image from v0.10.0 to v0.13.0\"\n  pr-link: " + link + "7\n"
	ctx, cancel := context.WithCancel(context.Background())
	in := &Input{Base: []byte{}, Head: []byte(entry), BaseRev: "base", HeadRev: "head", PR: 7, Change: ch, Settings: s,
		HeadMaster: func() (*config.Master, error) { return ch.Head.Master() }}
	if rep := Verify(in, ProfileFull); len(rep.Claims) == 0 {
		t.Fatal("no claim checked: the test tests nothing")
	}
	cancel()
	in.Ctx = ctx
	if rep := Verify(in, ProfileFull); len(rep.Claims) != 0 {
		t.Fatalf("claims checked after the cancel: %v", rep.Claims)
	}
}
