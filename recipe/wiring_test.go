package recipe

import (
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe/dryrun"
)

func TestNotWired(t *testing.T) {
	srv := func(argv []string, env map[string]string, files map[string]string) *dryrun.Command {
		c := &dryrun.Command{Argv: argv, Env: env, Files: files}
		c.Flags, c.Stray = dryrun.ParseArgv(argv, 2)
		return c
	}
	for _, c := range []struct {
		name string
		fw   string
		p    LaunchPoint
		srv  *dryrun.Command
		want string // settings not wired, comma-separated
	}{
		{"vllm dp attention as -tp 1 -dp 8", "vllm", LaunchPoint{TP: 8, EP: 8, DPAttn: true},
			srv([]string{"vllm", "serve", "-tp", "1", "--data-parallel-size", "8", "--enable-expert-parallel"}, nil, nil), ""},
		{"vllm dp without a tp option", "vllm", LaunchPoint{TP: 8, DPAttn: true},
			srv([]string{"vllm", "serve", "--data-parallel-size", "8"}, nil, nil), ""},
		{"tp value differs", "sglang", LaunchPoint{TP: 8},
			srv([]string{"python3", "-m", "sglang.launch_server", "--tp", "4"}, nil, nil), "tp"},
		{"dp-attn and ep missing", "sglang", LaunchPoint{TP: 8, EP: 8, DPAttn: true},
			srv([]string{"python3", "-m", "sglang.launch_server", "--tp", "8"}, nil, nil), "ep,dp-attn"},
		{"spec and kv by variable and option", "sglang", LaunchPoint{TP: 4, Spec: "mtp", KVOffloading: "dram"},
			srv([]string{"python3", "-m", "sglang.launch_server", "--tp-size", "4", "--speculative-algorithm", "EAGLE"}, map[string]string{"LMCACHE_LOCAL_CPU": "True"}, nil), ""},
		{"trt through its config file", "trt", LaunchPoint{TP: 8, EP: 8, DPAttn: true, Spec: "mtp"},
			srv([]string{"trtllm-serve", "m", "--tp_size=8", "--ep_size", "8", "--extra_llm_api_options", "x.yml"}, nil,
				map[string]string{"x.yml": "enable_attention_dp: true\nspeculative_config:\n  decoding_type: MTP\n"}), ""},
		{"trt with dp attention off in the file", "trtllm", LaunchPoint{TP: 8, DPAttn: true},
			srv([]string{"trtllm-serve", "m", "--tp_size=8"}, nil, map[string]string{"x.yml": "enable_attention_dp: false\n"}), "dp-attn"},
		{"off settings ask nothing", "vllm", LaunchPoint{TP: 0, EP: 1, Spec: "none", KVOffloading: "none"},
			srv([]string{"vllm", "serve"}, nil, nil), ""},
		{"unknown framework: nothing judged", "tilert", LaunchPoint{TP: 8, DPAttn: true}, srv([]string{"x", "y"}, nil, nil), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRev("head", testfs.Files{}, nil)
			var got []string
			for _, u := range NotWired(&c.p, c.srv, r.Wiring(c.fw)) {
				got = append(got, u.Setting)
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("not wired %v, want %q", got, c.want)
			}
		})
	}
}
