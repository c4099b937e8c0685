package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// TreeLevel is one level of the tree over the ad window: the ads its
// directors absorbed (accepted, from their /metrics), against those sent
// to them; the registry entries those ads set (a site director's ad sets
// its own entry and one per server below it); their CPU and RSS.
type TreeLevel struct {
	Level     string
	Directors int
	// Ads and Entries absorbed per second; Wanted is what the level
	// below sends per interval, per second.
	AdsPerSec, AdsWanted         float64
	EntriesPerSec, EntriesWanted float64
	Accepted, Refused            int64
	// Senders is how many advertise to the level.
	Senders int
	// Expected is how many ads the window should hold (AdsWanted × its
	// length).
	Expected float64
	// Busy is the level's CPU time over the window, in cores (all its
	// directors together).
	Busy float64
	// PeakRSS is the largest peak RSS among its directors, at the end of
	// the run; RSSOf names that director.
	PeakRSS int64
	RSSOf   string
	Err     string
}

// KeepsUp reports whether the level absorbed the ads sent, refusing
// none. A window of a few intervals catches one ad more or fewer of each
// sender whose ads land near its ends (a starved sender's a little
// late): the count may fall short of Expected by one per sender, and by
// at most a tenth.
func (l TreeLevel) KeepsUp() bool {
	slack := max(1, min(float64(l.Senders), l.Expected/10))
	return l.Err == "" && l.Refused == 0 && float64(l.Accepted) >= l.Expected-slack
}

// startScaleDirectors starts the director under test, or the tree of
// them, and says where each site's servers advertise.
func startScaleDirectors(ctx context.Context, cfg *DirectorScaleConfig, fl *simFleet) (*scaleDirector, *scaleTree, []adTarget, error) {
	if !cfg.Tree {
		d, err := startScaleDirector(ctx, cfg.Sitebox, filepath.Join(cfg.WorkDir, "director"), cfg.Servers, fl.approve)
		if err != nil {
			return nil, nil, nil, err
		}
		fmt.Fprintf(cfg.Out, "bench director --scale %d: %d simulated servers in %d sites, director %s (https %s)\n", cfg.Servers, cfg.Servers, cfg.Sites, d.root, d.https)
		targets := make([]adTarget, cfg.Sites)
		for k := range targets {
			targets[k] = adTarget{https: d.https, caFile: d.caFile}
		}
		return d, nil, targets, nil
	}
	t, err := startScaleTree(ctx, cfg.Sitebox, filepath.Join(cfg.WorkDir, "tree"), fl, cfg.layout(), cfg.Interval)
	if err != nil {
		return nil, nil, nil, err
	}
	fmt.Fprintf(cfg.Out, "bench director --scale %d --tree: %d simulated servers in %d sites, %d site directors, %d regional directors, top director %s (https %s)\n",
		cfg.Servers, cfg.Servers, cfg.Sites, len(t.sites), len(t.regions), t.top.root, t.top.https)
	return t.top, t, t.targets(), nil
}

// measureAllAds measures the ads absorbed over the ad window: from the
// servers (measureAds) and, in a tree, at each level.
func measureAllAds(ctx context.Context, cfg *DirectorScaleConfig, rep *DirectorScaleReport, counter *adCounter, d *scaleDirector, tree *scaleTree) error {
	if tree == nil {
		if err := measureAds(ctx, cfg, rep, counter, d.cpu); err != nil {
			return err
		}
		fmt.Fprintf(cfg.Out, "  ads: %.0f/s absorbed (%.0f/s sent at a %s interval), failures %d, p50 %s p99 %s; director CPU %.0f%% of a core, %s per ad\n",
			rep.AdsPerSec, rep.AdsWanted, cfg.Interval, rep.AdFailures, latText(rep.AdP50), latText(rep.AdP99), 100*rep.AdBusy, latText(rep.AdCPU))
		return nil
	}
	levels := tree.levels()
	before := make([]levelSample, len(levels))
	for i, l := range levels {
		before[i] = sampleLevel(ctx, l)
	}
	// The servers' ads go to the site directors: their CPU is the one
	// that absorbs them.
	if err := measureAds(ctx, cfg, rep, counter, levelCPU(levels[0])); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "  server ads: %.0f/s absorbed by the site directors (%.0f/s sent at a %s interval), failures %d, p50 %s p99 %s\n",
		rep.AdsPerSec, rep.AdsWanted, cfg.Interval, rep.AdFailures, latText(rep.AdP50), latText(rep.AdP99))
	lay := tree.layout
	sent := []struct{ ads, entries int }{
		{lay.servers, lay.servers},               // servers → site directors
		{lay.sites, lay.sites + lay.servers},     // site directors → regions
		{lay.regions, lay.regions + lay.servers}, // regions → top
	}
	for i, l := range levels {
		after := sampleLevel(ctx, l)
		tl := TreeLevel{Level: l.name, Directors: len(l.dirs), Senders: sent[i].ads,
			AdsWanted:     float64(sent[i].ads) / cfg.Interval.Seconds(),
			EntriesWanted: float64(sent[i].entries) / cfg.Interval.Seconds()}
		if err := errors.Join(before[i].err, after.err); err != nil {
			tl.Err = err.Error()
		} else {
			tl.add(before[i], after)
		}
		rep.Levels = append(rep.Levels, tl)
		fmt.Fprintln(cfg.Out, levelLine(tl))
	}
	n, err := d.usable(ctx)
	if err != nil {
		return fmt.Errorf("the top director's federation view: %w", err)
	}
	rep.UsableAfter = n
	fmt.Fprintf(cfg.Out, "  %d of %d servers usable at the top director at the end of the window\n", n, cfg.Servers)
	return nil
}

// levelSample is the counters and CPU time of a level's directors, each
// read at its own moment: reading them all takes a while under load, and
// each director's rate is over its own interval between two samples.
type levelSample struct {
	dirs []dirSample
	err  error
}

type dirSample struct {
	at  time.Time
	ads adTally
	cpu time.Duration
}

func sampleLevel(ctx context.Context, l treeLevel) levelSample {
	var s levelSample
	for _, d := range l.dirs {
		ds := dirSample{at: time.Now()}
		var err error
		if ds.ads, err = d.adTally(ctx); err == nil {
			ds.cpu, err = d.cpu()
		}
		if err != nil {
			s.err = fmt.Errorf("%s: %w", d.name, err)
			return s
		}
		s.dirs = append(s.dirs, ds)
	}
	return s
}

// add sums the level's directors' rates between two samples; Expected
// is over their mean interval.
func (tl *TreeLevel) add(before, after levelSample) {
	var mean float64
	for i, b := range before.dirs {
		a := after.dirs[i]
		el := a.at.Sub(b.at).Seconds()
		mean += el / float64(len(before.dirs))
		tl.Accepted += a.ads.accepted - b.ads.accepted
		tl.Refused += a.ads.refused - b.ads.refused
		tl.AdsPerSec += float64(a.ads.accepted-b.ads.accepted) / el
		tl.EntriesPerSec += float64(a.ads.entries-b.ads.entries) / el
		tl.Busy += (a.cpu - b.cpu).Seconds() / el
	}
	tl.Expected = tl.AdsWanted * mean
}

// levelCPU is the CPU time of a level's directors together.
func levelCPU(l treeLevel) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		var sum time.Duration
		for _, d := range l.dirs {
			c, err := d.cpu()
			if err != nil {
				return 0, fmt.Errorf("%s: %w", d.name, err)
			}
			sum += c
		}
		return sum, nil
	}
}

// treeRSS records each level's largest peak RSS.
func treeRSS(rep *DirectorScaleReport, tree *scaleTree) {
	for i, l := range tree.levels() {
		if i >= len(rep.Levels) {
			rep.Levels = append(rep.Levels, TreeLevel{Level: l.name, Directors: len(l.dirs)})
		}
		for _, d := range l.dirs {
			if rss, err := d.rss(); err == nil && rss > rep.Levels[i].PeakRSS {
				rep.Levels[i].PeakRSS, rep.Levels[i].RSSOf = rss, d.name
			}
		}
	}
}

func levelLine(l TreeLevel) string {
	if l.Err != "" {
		return fmt.Sprintf("  %s: FAILED: %s", l.Level, l.Err)
	}
	return fmt.Sprintf("  %s (%d): %.1f ads/s absorbed of %.1f/s sent (%d refused), %.0f entries/s of %.0f/s; CPU %.0f%% of a core",
		l.Level, l.Directors, l.AdsPerSec, l.AdsWanted, l.Refused, l.EntriesPerSec, l.EntriesWanted, 100*l.Busy)
}
