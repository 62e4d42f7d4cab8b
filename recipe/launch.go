package recipe

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/perflog/perflog/recipe/dryrun"
)

// PointLaunch is a point with what its dry run launched (Launch is nil
// for a point that is not dry-run: see Point.Note).
type PointLaunch struct {
	Point  LaunchPoint    `json:"point"`
	Launch *dryrun.Launch `json:"launch,omitempty"`
}

// patterns are the launch patterns of the settings, else the defaults.
func (r *Rev) patterns() *dryrun.Patterns {
	if r.Settings == nil {
		return dryrun.DefaultPatterns
	}
	ls := r.Settings.Launch
	if len(ls.Servers) == 0 && len(ls.Routers) == 0 && len(ls.Clients) == 0 {
		return dryrun.DefaultPatterns
	}
	p := *dryrun.DefaultPatterns
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
func (r *Rev) DryRunPoint(ctx context.Context, p *LaunchPoint, o dryrun.Options) *dryrun.Launch {
	if p.Multinode && p.Recipe != "" {
		return dryrun.Describe(r.Files, p.Recipe)
	}
	if p.Note != "" || p.Launcher == "" {
		return nil
	}
	if o.Patterns == nil {
		o.Patterns = r.patterns()
	}
	l := dryrun.Run(ctx, r.Files, p.Launcher, nil, p.Env, o)
	if p.Multinode && l != nil {
		// a memo's launch is shared: what is said of it here goes on a copy
		c := *l
		c.Servers = slices.Clone(l.Servers)
		l = &c
		roles(l)
		if l.Status == dryrun.StatusNoServer {
			// a multi-node path ends in jobs and containers the dry run
			// follows only as far as it can read them: no server seen is
			// not known to be none
			l.Status, l.Reason = dryrun.StatusUnknown, "the multi-node launch path ended without a server the dry run could follow"
		}
	}
	return l
}

// roleOrder puts prefill workers first, then decode, then the others.
func roleOrder(role string) int {
	switch role {
	case "prefill":
		return 0
	case "decode":
		return 1
	}
	return 2
}

// roles names the workers of a dry-run multi-node launch by what each
// server was told it is (sglang's --disaggregation-mode prefill|decode,
// vLLM's kv_role kv_producer|kv_consumer), else "worker", as a described
// launch names them.
func roles(l *dryrun.Launch) {
	defer slices.SortStableFunc(l.Servers, func(a, b dryrun.Command) int { return roleOrder(a.Role) - roleOrder(b.Role) })
	for i := range l.Servers {
		c := &l.Servers[i]
		c.Role = "worker"
		if v, ok := c.Flag("--disaggregation-mode"); ok && len(v) > 0 && !strings.Contains(v[0], dryrun.UnknownMarker) {
			c.Role = v[0]
			continue
		}
		for _, a := range c.Argv {
			switch {
			case strings.Contains(a, "kv_producer"):
				c.Role = "prefill"
			case strings.Contains(a, "kv_consumer"):
				c.Role = "decode"
			}
		}
	}
}

// DryRunKey dry-runs every point of a recipe (point > 0: that point
// alone).
func (r *Rev) DryRunKey(ctx context.Context, key string, point int, o dryrun.Options) ([]PointLaunch, error) {
	return r.DryRunKeys(ctx, []string{key}, point, o)
}

// DryRunKeys dry-runs every point of the recipes, on as many goroutines
// as the machine has cores (points are independent: BenchmarkDryRunCorpusHead
// measures it); the result is in key, then point order.
func (r *Rev) DryRunKeys(ctx context.Context, keys []string, point int, o dryrun.Options) ([]PointLaunch, error) {
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
	if o.Sandbox == nil { // the points share what their dry runs parse
		o.Sandbox = dryrun.InProcess()
	}
	// points the workflow gives the same environment (a multi-node row's
	// concurrencies share one job) are dry-run once, and share the launch
	first := map[string]int{}
	same := make([]int, len(out)) // the point whose launch a point shares
	var runs []int
	for i := range out {
		same[i] = i
		if p := &out[i].Point; p.Multinode && p.Recipe == "" {
			k := p.Launcher + "\x00" + p.Note
			for _, name := range slices.Sorted(maps.Keys(p.Env)) {
				k += "\x00" + name + "=" + p.Env[name]
			}
			if j, ok := first[k]; ok {
				same[i] = j
				continue
			}
			first[k] = i
		}
		runs = append(runs, i)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(runs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i].Launch = r.DryRunPoint(ctx, &out[i].Point, o)
			}
		}()
	}
	for _, i := range runs {
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
	for i := range out {
		out[i].Launch = out[same[i]].Launch
	}
	return out, nil
}
