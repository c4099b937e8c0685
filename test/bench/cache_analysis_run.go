package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"sitebox/test/peers"
)

// analysisRun is one setup of the analysis mode: its server, kept running
// from its cold pass until every setup's warm passes are done.
type analysisRun struct {
	p       AnalysisPoint
	t       *target
	warm    []float64 // each warm pass's rate
	cleanup []func()  // run last first by close
}

// startAnalysisRun starts setup with an empty cache and runs its cold
// pass. A failure is kept in the point, and the setup's warm passes are
// then skipped.
func startAnalysisRun(ctx context.Context, env *cacheEnv, cfg *AnalysisConfig, setup string) *analysisRun {
	r := &analysisRun{p: AnalysisPoint{Setup: setup}}
	if err := r.start(ctx, env, cfg); err != nil {
		r.p.Err = err.Error()
	}
	return r
}

func (r *analysisRun) start(ctx context.Context, env *cacheEnv, cfg *AnalysisConfig) error {
	dir, err := os.MkdirTemp(cfg.WorkDir, r.p.Setup+"-")
	if err != nil {
		return err
	}
	r.atClose(func() { os.RemoveAll(dir) })
	relay, err := StartRelay(env.link.Addr)
	if err != nil {
		return err
	}
	r.atClose(func() { relay.Close() })
	if r.p.Setup == "local" {
		r.t, err = startLocalOrigin(ctx, cfg.Sitebox, env.data)
	} else {
		r.t, err = env.startTarget(ctx, r.p.Setup, relay.Addr, dir)
	}
	if err != nil {
		return err
	}
	if r.t.proc != nil {
		r.atClose(r.t.proc.Stop)
		// Not VmRSS: the sitebox cache maps its data files to lend their
		// page-cache pages to the socket (see the cache's view.go), and
		// VmRSS would count those pages, which XCache holds too, unmapped.
		r.atClose(sampleRSS(r.t.proc.OwnRSS, &r.p.PeakRSS))
	}
	cold, err := cfg.pass()(ctx, cfg, r.t.host, env.names)
	if err != nil {
		return withLog(err, r.t)
	}
	r.p.UpstreamBytes = relay.Down()
	r.p.Cold, r.p.ColdSecs = cold.rate(), cold.Seconds
	r.p.AskedBytes = cold.Bytes
	if r.p.Setup == "local" {
		r.p.Cold, r.p.UpstreamBytes = 0, 0 // no link, no cache: nothing is cold
	}
	return nil
}

// coldRounds runs all but the last of every setup's cold passes (the
// last is the one whose server stays up for the warm passes), each from a
// fresh server with an empty cache, in rounds that start with the next
// setup each time. It returns each setup's results, in cfg.Setups order.
func coldRounds(ctx context.Context, env *cacheEnv, cfg *AnalysisConfig) []coldResults {
	colds := make([]coldResults, len(cfg.Setups))
	for i := range cfg.ColdPasses - 1 {
		for j := range cfg.Setups {
			k := (i + 1 + j) % len(cfg.Setups)
			if cfg.Setups[k] == "local" || colds[k].err != "" || ctx.Err() != nil {
				continue // nothing is cold without a link; failed already
			}
			r := startAnalysisRun(ctx, env, cfg, cfg.Setups[k])
			colds[k].rates = append(colds[k].rates, r.p.Cold)
			colds[k].err = r.p.Err
			r.close()
		}
	}
	return colds
}

// coldResults are one setup's cold passes before the last.
type coldResults struct {
	rates []float64
	err   string // the first pass that failed
}

// addColds makes the setup's cold rate the median of its cold passes: the
// earlier rounds' and its own. A failed round fails the setup.
func (r *analysisRun) addColds(c coldResults) {
	if r.p.Err != "" || r.p.Cold == 0 {
		return
	}
	if c.err != "" {
		r.p.Err = "an earlier cold pass: " + c.err
		return
	}
	all := append(c.rates, r.p.Cold)
	r.p.Cold, r.p.ColdMin, r.p.ColdMax = median(all), slices.Min(all), slices.Max(all)
}

// warmPass runs one warm pass, adding its rate to the setup's.
func (r *analysisRun) warmPass(ctx context.Context, cfg *AnalysisConfig, env *cacheEnv) {
	if r.p.Err != "" {
		return
	}
	res, err := cfg.pass()(ctx, cfg, r.t.host, env.names)
	if err != nil {
		r.p.Err = withLog(err, r.t).Error()
		return
	}
	r.warm = append(r.warm, res.rate())
	r.p.WarmSecs += res.Seconds
}

// finish reports what the cache did, stops the setup and returns its
// point.
func (r *analysisRun) finish(ctx context.Context, cfg *AnalysisConfig) AnalysisPoint {
	if r.p.Err == "" {
		if r.t.diagnose != nil {
			fmt.Fprintf(cfg.Out, "  %s %s\n", r.p.Setup, r.t.diagnose(ctx))
		}
		if len(r.warm) > 0 {
			r.p.Warm = median(r.warm)
			r.p.WarmMin, r.p.WarmMax = slices.Min(r.warm), slices.Max(r.warm)
		}
	}
	r.close()
	return r.p
}

func (r *analysisRun) atClose(f func()) { r.cleanup = append(r.cleanup, f) }

// close stops what start started, last first; a second call does nothing.
func (r *analysisRun) close() {
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
	r.cleanup = nil
}

// pass returns the workload's pass: vector reads, or uproot jobs.
func (c *AnalysisConfig) pass() func(context.Context, *AnalysisConfig, string, []string) (passResult, error) {
	if c.uproot() {
		return runUprootJobs
	}
	return runVectorReads
}

func withLog(err error, t *target) error {
	if t.proc == nil {
		return err
	}
	return fmt.Errorf("%w\nlog: %s", err, lastLines(t.proc.Log.String(), 10))
}

// startLocalOrigin serves data from a sitebox origin on this host.
func startLocalOrigin(ctx context.Context, bin, data string) (*target, error) {
	if bin == "" {
		return nil, fmt.Errorf("no sitebox binary given")
	}
	port, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	p, err := peers.StartSitebox(ctx, bin, []int{port}, "serve", "--export", "/="+data+":ro",
		"--root-addr", "127.0.0.1:"+strconv.Itoa(port), "--https-addr", "off",
		"--state-dir", filepath.Join(filepath.Dir(data), "local-state"), "--log-level", "warn")
	if err != nil {
		return nil, fmt.Errorf("start sitebox origin: %w", err)
	}
	return &target{host: "127.0.0.1:" + strconv.Itoa(port), proc: p}, nil
}
