package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"sitebox/test/peers"
)

// measureRedirects measures the open→redirect rate of files held by one
// server, located already, in cfg.Rounds rounds: the director, then (with
// cfg.Cmsd) the cmsd baseline under the same load right after it. On a
// shared machine the load from elsewhere changes from minute to minute;
// side by side in each round, the two see about the same.
func measureRedirects(ctx context.Context, cfg *DirectorScaleConfig, dcfg *DirectorConfig, rep *DirectorScaleReport, d *scaleDirector) error {
	held := make([]string, cfg.Files)
	for k := range held {
		held[k] = scalePath(1, k)
	}
	var base *cmsdSetup
	if cfg.Cmsd {
		var err error
		if base, err = startCmsdBaseline(ctx, filepath.Join(cfg.WorkDir, "cmsd")); err != nil {
			return err
		}
		defer base.cl.Stop()
	}
	var cpu time.Duration
	var redirects int
	for range cfg.Rounds {
		cpu0, err0 := d.cpu()
		p := measure(ctx, dcfg, "sitebox", d.root, openOp(0), held, cfg.Clients)
		if cpu1, err1 := d.cpu(); err0 == nil && err1 == nil && p.Err == "" {
			cpu += cpu1 - cpu0
			redirects += p.Done
		}
		rep.RedirectRounds = append(rep.RedirectRounds, p)
		fmt.Fprintln(cfg.Out, progressLine(p))
		if base != nil {
			c := measure(ctx, dcfg, "cmsd", base.cl.ManagerAddr, openOp(portOf(base.cl.ServerAddr)), base.paths, cfg.Clients)
			rep.CmsdRounds = append(rep.CmsdRounds, c)
			fmt.Fprintln(cfg.Out, progressLine(c))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if redirects > 0 {
		rep.RedirectCPU = cpu / time.Duration(redirects)
	}
	rep.Redirects = medianPoint(rep.RedirectRounds)
	if base != nil {
		c := medianPoint(rep.CmsdRounds)
		rep.Cmsd = &c
		var ratios []float64
		for i, p := range rep.RedirectRounds {
			if c := rep.CmsdRounds[i]; p.Err == "" && c.Err == "" && c.PerSec > 0 {
				ratios = append(ratios, p.PerSec/c.PerSec)
			}
		}
		if len(ratios) > 0 {
			slices.Sort(ratios)
			rep.Ratio = ratios[len(ratios)/2]
		}
	}
	return nil
}

// medianPoint is the round with the median rate (a failed one, if any
// failed: a failure is not hidden by the others).
func medianPoint(ps []DirectorPoint) DirectorPoint {
	for _, p := range ps {
		if p.Err != "" {
			return p
		}
	}
	s := slices.Clone(ps)
	slices.SortFunc(s, func(a, b DirectorPoint) int {
		switch {
		case a.PerSec < b.PerSec:
			return -1
		case a.PerSec > b.PerSec:
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

// cmsdSetup is the baseline: a real cmsd manager with one xrootd data
// server holding paths, the largest cmsd setup the benchmark runs.
type cmsdSetup struct {
	cl    *peers.Cluster
	paths []string
}

func startCmsdBaseline(ctx context.Context, dir string) (*cmsdSetup, error) {
	data := filepath.Join(dir, "data")
	paths, err := makeDirectorFiles(data, 20)
	if err != nil {
		return nil, err
	}
	cl, err := startCluster(ctx, filepath.Join(dir, "cluster"), data)
	if err != nil {
		return nil, err
	}
	return &cmsdSetup{cl: cl, paths: paths}, nil
}
