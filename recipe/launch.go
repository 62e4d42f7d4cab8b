package recipe

import (
	"context"
	"io/fs"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// PointLaunch is a point with what its dry run launched (Launch is nil
// for a point that is not dry-run: see Point.Note).
type PointLaunch struct {
	Point  LaunchPoint `json:"point"`
	Launch *Launch     `json:"launch,omitempty"`
}

// patterns are the launch patterns of the settings, else the defaults.
func (r *Rev) patterns() *Patterns {
	if r.Settings == nil {
		return DefaultPatterns
	}
	ls := r.Settings.Launch
	if len(ls.Servers) == 0 && len(ls.Routers) == 0 && len(ls.Clients) == 0 {
		return DefaultPatterns
	}
	p := *DefaultPatterns
	if len(ls.Servers) > 0 {
		p.Servers = ls.Servers
	}
	if len(ls.Routers) > 0 {
		p.Routers = ls.Routers
	}
	if len(ls.Clients) > 0 {
		p.Clients = ls.Clients
	}
	return &p
}

// DryRunPoint runs one point's launcher in the sandbox (nil for a point
// that is not dry-run).
func (r *Rev) DryRunPoint(ctx context.Context, p *LaunchPoint, o DryRunOptions) *Launch {
	if p.Multinode {
		if p.Recipe == "" {
			return nil
		}
		return describeSrt(r.Files, p.Recipe)
	}
	if p.Note != "" || p.Launcher == "" {
		return nil
	}
	if o.Patterns == nil {
		o.Patterns = r.patterns()
	}
	if o.Memo != nil {
		return o.Memo.run(r.Files, p.Launcher, p.Env, func(f fs.FS) *Launch { return DryRun(ctx, f, p.Launcher, nil, p.Env, o) })
	}
	return DryRun(ctx, r.Files, p.Launcher, nil, p.Env, o)
}

// DryRunKey dry-runs every point of a recipe (point > 0: that point
// alone).
func (r *Rev) DryRunKey(ctx context.Context, key string, point int, o DryRunOptions) ([]PointLaunch, error) {
	return r.DryRunKeys(ctx, []string{key}, point, o)
}

// DryRunKeys dry-runs every point of the recipes, on as many goroutines
// as the machine has cores (2 cores, every point at the corpus head: 7.0
// s on one, 4.3 s on two); the result is in key, then point order.
func (r *Rev) DryRunKeys(ctx context.Context, keys []string, point int, o DryRunOptions) ([]PointLaunch, error) {
	var out []PointLaunch
	for _, k := range keys {
		pts, err := r.LaunchPoints(k)
		if err != nil {
			return nil, err
		}
		for i := range pts {
			if point <= 0 || pts[i].Index == point {
				out = append(out, PointLaunch{Point: pts[i]})
			}
		}
	}
	if o.Patterns == nil {
		o.Patterns = r.patterns()
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(out))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i].Launch = r.DryRunPoint(ctx, &out[i].Point, o)
			}
		}()
	}
	for i := range out {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// EnvChanges lists the variables of the command's environment that the
// launch path set or changed from the workflow's (base), sorted: what
// the recipe's files chose, not what every point is given.
func (c *Command) EnvChanges(base map[string]string) []string {
	var out []string
	for k, v := range c.Env {
		if b, ok := base[k]; !ok || b != v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Program names a launch by its program words ("python3 -m
// sglang.launch_server", "vllm serve MODEL", "trtllm-serve MODEL"): the
// words before its first option, at most three.
func (c *Command) Program() string {
	var w []string
	for _, a := range c.Argv {
		if strings.HasPrefix(a, "-") && a != "-m" {
			break
		}
		w = append(w, a)
		if len(w) == 3 {
			break
		}
	}
	return strings.Join(w, " ")
}
