package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"
)

// DirectorScaleConfig describes the director-at-scale benchmark: Servers
// simulated data servers in Sites sites advertising to one sitebox
// director every Interval. Zero fields take the documented defaults.
type DirectorScaleConfig struct {
	Sitebox  string // sitebox binary
	WorkDir  string // scratch: the director's config, state and log
	Servers  int
	Sites    int           // default 50
	Interval time.Duration // advertisement interval (default 10 s)
	// AdWindow is how long absorbed ads are counted once every server
	// has joined (default two intervals).
	AdWindow time.Duration
	Files    int           // files per holder class located (default 20)
	Clients  int           // parallel clients for the redirect rate (default 16)
	Duration time.Duration // one redirect-rate measurement (default 5 s)
	// Rounds is how many times the redirect rate is measured (default 3),
	// the director and the cmsd baseline one after the other in each
	// round, so both see the same load from whatever else runs here.
	Rounds int
	// Cmsd adds the baseline: a real cmsd manager with one xrootd data
	// server under the same redirect load.
	Cmsd bool
	// Tree runs a three-level tree of directors instead of one: a site
	// director per site, Regions regional directors, the top director
	// (director_tree.go). Regions defaults to 5, or more when a region
	// would have more servers than a director takes from one child.
	Tree    bool
	Regions int
	// NoHoldings has the servers send no holdings filters, so a file's
	// first open asks every server, as before directors had filters.
	NoHoldings bool
	Out        io.Writer // progress lines
}

func (c *DirectorScaleConfig) applyDefaults() {
	if c.Sites <= 0 {
		c.Sites = 50
	}
	if c.Interval <= 0 {
		c.Interval = 10 * time.Second
	}
	if c.AdWindow <= 0 {
		c.AdWindow = 2 * c.Interval
	}
	if c.Files <= 0 {
		c.Files = 20
	}
	if c.Clients <= 0 {
		c.Clients = 16
	}
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Tree && c.Regions <= 0 {
		c.Regions = defaultRegions(c.Servers, c.Sites)
	}
}

// layout is the tree's assignment of servers and sites.
func (c *DirectorScaleConfig) layout() treeLayout {
	return treeLayout{servers: c.Servers, sites: c.Sites, regions: c.Regions}
}

func (c *DirectorScaleConfig) validate() error {
	switch {
	case c.Servers < 1:
		return fmt.Errorf("scale %d: want at least 1 server", c.Servers)
	case c.Servers > 15000:
		// Each server is a listener here and two connections at the
		// director: past this, descriptors run out before the director
		// is measured.
		return fmt.Errorf("scale %d: at most 15000 simulated servers on one machine", c.Servers)
	case c.Sitebox == "":
		return fmt.Errorf("no sitebox binary given")
	case c.Tree:
		return c.layout().check()
	}
	return nil
}

// DirectorScaleReport is the whole run.
type DirectorScaleReport struct {
	Config DirectorScaleConfig
	CPUs   int
	// Joined is how long after the first ad every server was listed as
	// usable by the director, or when the benchmark stopped waiting;
	// Usable is how many were then.
	Joined time.Duration
	Usable int
	// UsableAfter is, in a tree, how many the top director listed as
	// usable at the end of the ad window: entries that missed their
	// refresh through the tree would have expired.
	UsableAfter int
	// Ads absorbed (answered 2xx) per second over the ad window, against
	// Wanted = Servers/Interval; AdFailures counts refusals and errors.
	AdsPerSec, AdsWanted float64
	AdFailures           int64
	AdFirstError         string
	AdP50, AdP99         time.Duration
	// AdBusy is the director's CPU time over the window in cores (all
	// its work then: verifying and recording ads, its upkeep), AdCPU the
	// same per ad absorbed: they tell its share from the simulated
	// servers' on one machine.
	AdBusy float64
	AdCPU  time.Duration
	// FirstSearch is the first locate, which connects the director to
	// every server; later searches reuse those connections.
	FirstSearch time.Duration
	Locate      []ScaleLocate
	// LocateSkipped says why locates and redirects were not measured.
	LocateSkipped string
	// Redirects is the open→redirect rate for files held by one server,
	// located already; Cmsd the same load on the cmsd baseline: the
	// median of the rounds, each of which is kept. Ratio is the median
	// of the rounds' director ÷ cmsd.
	Redirects                  DirectorPoint
	Cmsd                       *DirectorPoint
	RedirectRounds, CmsdRounds []DirectorPoint
	Ratio                      float64
	// RedirectCPU is the director's CPU time per redirect over its
	// rounds (ads included, as they go on meanwhile).
	RedirectCPU time.Duration
	PeakRSS     int64 // the (top) director process's
	// Levels are the tree's, bottom up (tree mode only): the ads each
	// level's directors absorbed over the ad window, their CPU and RSS.
	Levels []TreeLevel
}

// KeepsUp reports whether the director (in a tree, every level)
// absorbed the ads as fast as they came, refusing none.
func (r *DirectorScaleReport) KeepsUp() bool {
	for _, l := range r.Levels {
		if !l.KeepsUp() {
			return false
		}
	}
	if r.Config.Tree && r.UsableAfter < r.Config.Servers {
		return false
	}
	return r.Usable == r.Config.Servers && r.AdFailures == 0 && r.AdsPerSec >= 0.95*r.AdsWanted
}

// ScaleLocate is locating files held by Holders servers (0: by none).
type ScaleLocate struct {
	Holders int
	// Cold is the first open of each file: the director asks every
	// server, the client honouring kXR_wait; Waits counts those.
	ColdP50, ColdP99 time.Duration
	Waits            int
	// ColdCPU is the director's CPU time per first open (what else it
	// did meanwhile included: in a tree, the top director absorbs a few
	// ads a second): what a first open costs it, whoever else shares
	// the machine.
	ColdCPU time.Duration
	// Warm is opening them again, answered from what the director found.
	WarmP50, WarmP99 time.Duration
	Err              string
}

// DirectorScale runs the benchmark.
func DirectorScale(ctx context.Context, cfg DirectorScaleConfig) (*DirectorScaleReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rep := &DirectorScaleReport{Config: cfg, CPUs: runtime.NumCPU(), AdsWanted: float64(cfg.Servers) / cfg.Interval.Seconds()}
	filterFiles := cfg.Files
	if cfg.NoHoldings {
		filterFiles = 0
	}
	fl, err := startSimFleet(cfg.Servers, cfg.Sites, filterFiles)
	if err != nil {
		return nil, err
	}
	defer fl.Stop()
	d, tree, targets, err := startScaleDirectors(ctx, &cfg, fl)
	if err != nil {
		return nil, err
	}
	if tree != nil {
		defer tree.stop()
	} else {
		defer d.stop()
	}

	actx, stopAds := context.WithCancel(ctx)
	var ads sync.WaitGroup
	defer func() { stopAds(); ads.Wait() }()
	counter := &adCounter{}
	start := time.Now()
	if err := fl.advertise(actx, targets, cfg.Interval, counter, &ads); err != nil {
		return nil, err
	}
	// Through a tree, a server reaches the top one interval per level
	// later at most.
	within := cfg.Interval + 30*time.Second
	if tree != nil {
		within += 2 * cfg.Interval
	}
	if rep.Usable, err = d.waitUsable(ctx, cfg.Servers, within); err != nil {
		return rep, err
	}
	rep.Joined = time.Since(start)
	fmt.Fprintf(cfg.Out, "  %d of %d servers usable after %s\n", rep.Usable, cfg.Servers, rep.Joined.Round(100*time.Millisecond))

	if err := measureAllAds(ctx, &cfg, rep, counter, d, tree); err != nil {
		return rep, err
	}

	if rep.Usable < cfg.Servers {
		rep.LocateSkipped = fmt.Sprintf("not measured: only %d of the %d servers were usable %s after the first ad", rep.Usable, cfg.Servers, durText(rep.Joined.Round(time.Second)))
		fmt.Fprintf(cfg.Out, "  locate and redirects %s\n", rep.LocateSkipped)
		return rep, finishScale(rep, d, tree)
	}
	if need, have := locateFDs(cfg.Servers), openFilesLimit(); have > 0 && need > have {
		// Every server would hold the director's probe connection on top
		// of its listener: measure what fits rather than fail midway.
		rep.LocateSkipped = fmt.Sprintf("not measured: locating through %d servers needs about %d descriptors in the benchmark process (a listener and the director's connection per server), and it may open %d (ulimit -n)", cfg.Servers, need, have)
		fmt.Fprintf(cfg.Out, "  locate and redirects %s\n", rep.LocateSkipped)
		return rep, finishScale(rep, d, tree)
	}
	// The ads go on while the director locates and redirects, as they
	// would in a federation.
	dcfg := &DirectorConfig{Duration: cfg.Duration, WarmWait: 30 * time.Second}
	if err := measureLocates(ctx, &cfg, rep, d.root, d.cpu); err != nil {
		return rep, err
	}
	if err := measureRedirects(ctx, &cfg, dcfg, rep, d); err != nil {
		return rep, err
	}
	if err := finishScale(rep, d, tree); err != nil {
		fmt.Fprintf(cfg.Out, "  director peak RSS: %v\n", err)
	}
	return rep, ctx.Err()
}

// measureLocates measures the director's first search and locates of
// each holder class.
func measureLocates(ctx context.Context, cfg *DirectorScaleConfig, rep *DirectorScaleReport, root string, cpu func() (time.Duration, error)) error {
	var err error
	if rep.FirstSearch, err = firstSearch(ctx, root); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "  first search (connects to every server): %s\n", latText(rep.FirstSearch))
	for _, n := range holderClasses {
		l := measureLocate(ctx, root, n, min(n, cfg.Servers), cfg.Files, cpu)
		rep.Locate = append(rep.Locate, l)
		fmt.Fprintln(cfg.Out, locateLine(l))
	}
	return nil
}

// locateFDs is about how many descriptors this process needs to have the
// director locate through n servers.
func locateFDs(n int) uint64 { return uint64(2*n + 256) }

// finishScale records the director's peak RSS, and each tree level's
// largest.
func finishScale(rep *DirectorScaleReport, d *scaleDirector, tree *scaleTree) error {
	var err error
	rep.PeakRSS, err = d.rss()
	if tree != nil {
		treeRSS(rep, tree)
	}
	return err
}

// measureAds counts the ads absorbed over cfg.AdWindow, and the
// director's CPU time over it.
func measureAds(ctx context.Context, cfg *DirectorScaleConfig, rep *DirectorScaleReport, c *adCounter, cpu func() (time.Duration, error)) error {
	c.take()
	ok0, failed0 := c.ok.Load(), c.failed.Load()
	cpu0, cpuErr := cpu()
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(cfg.AdWindow):
	}
	el := time.Since(t0)
	lats := c.take()
	slices.Sort(lats)
	r := loadResult{Latencies: lats}
	if cpu1, err := cpu(); err == nil && cpuErr == nil {
		rep.AdBusy = (cpu1 - cpu0).Seconds() / el.Seconds()
		if n := c.ok.Load() - ok0; n > 0 {
			rep.AdCPU = (cpu1 - cpu0) / time.Duration(n)
		}
	}
	rep.AdsPerSec = float64(c.ok.Load()-ok0) / el.Seconds()
	rep.AdFailures = c.failed.Load() - failed0
	rep.AdP50, rep.AdP99 = r.Quantile(0.50), r.Quantile(0.99)
	c.mu.Lock()
	rep.AdFirstError = c.firstErr
	c.mu.Unlock()
	return nil
}
