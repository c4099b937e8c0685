package bench

import (
	"context"
	"fmt"
	"os"
	"sitebox/internal/sitebench"
	"time"
)

// CachePoint is one setup at one client count.
type CachePoint struct {
	Setup   string // direct, sitebox or xcache
	Clients int
	Err     string // why the point could not run; nothing else is set then

	Cold, Warm Phase
	FilesCold  int   // distinct files read in the cold phase
	Served     int64 // bytes delivered to clients, both phases
	Upstream   int64 // bytes the origin sent through the relay, both phases
	Unique     int64 // bytes of the distinct files read
	// UpstreamPerUnique is Upstream ÷ Unique: 1 when the WAN carried each
	// byte once; the direct setup reads everything from the origin.
	UpstreamPerUnique float64
	// HitRatio is the share of served bytes that did not cross the link,
	// over the whole point and over the warm phase alone. HitSource says
	// where it comes from: "relay" (1 − upstream ÷ served) or "cache" (the
	// cache's own metrics; then WarmHitRatio is still from the relay).
	HitRatio, WarmHitRatio float64
	HitSource              string
	PeakRSS                int64 // bytes; 0 for direct
	// CPUPerGB is the cache process's CPU seconds (user + system) per GB
	// it served, in each phase; 0 for direct.
	CPUPerGBCold, CPUPerGBWarm float64
	Copies, Failed             int // xrdcp runs, and those that failed
	FirstError                 string
	ColdEnd                    float64            // seconds from the start when the cold phase ended
	Series                     []sitebench.Sample // aggregate throughput over time
}

// Phase is throughput over one phase. Bytes of copies that straddle the
// phase's end are counted in proportion to their time inside it.
type Phase struct {
	Seconds  float64
	Bytes    int64
	MBps     float64 // Bytes ÷ Seconds, in 10⁶ bytes per second
	Upstream int64   // relay bytes during the phase
}

// point runs one setup at n clients from an empty cache: a fresh relay,
// a fresh cache process and directory, both phases, then teardown.
func (e *cacheEnv) point(ctx context.Context, setup string, n int) CachePoint {
	p := CachePoint{Setup: setup, Clients: n}
	fail := func(err error) CachePoint { p.Err = err.Error(); return p }
	dir, err := os.MkdirTemp(e.cfg.WorkDir, setup+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	relay, err := StartRelay(e.link.Addr)
	if err != nil {
		return fail(err)
	}
	defer relay.Close()
	t, err := e.startTarget(ctx, setup, relay.Addr, dir)
	if err != nil {
		return fail(err)
	}
	var rss func() (int64, error)
	var cpu func() (time.Duration, error)
	if t.proc != nil {
		defer t.proc.Stop()
		// Not VmRSS: a cache lending page-cache pages from mapped data
		// files would have them counted (see peers.OwnRSS).
		rss, cpu = t.proc.OwnRSS, t.proc.CPUTime
	}
	r, err := e.runPhases(ctx, t.host, n, relay, rss, cpu)
	if err != nil {
		if t.proc != nil {
			err = fmt.Errorf("%w\n%s log: %s", err, setup, lastLines(t.proc.Log.String(), 10))
		}
		return fail(err)
	}
	e.summarize(&p, r)
	if t.proc != nil {
		// Sampled only: the kernel's high-water mark (VmHWM) counts mapped
		// file pages too, as VmRSS does.
		p.PeakRSS = r.peakRSS
	}
	if t.diagnose != nil {
		fmt.Fprintf(e.cfg.Out, "  %s N=%d %s\n", setup, p.Clients, t.diagnose(ctx))
	}
	if t.hitRatio != nil {
		if h, err := t.hitRatio(ctx); err == nil {
			p.HitRatio, p.HitSource = h, "cache"
		} else {
			fmt.Fprintf(e.cfg.Out, "  %s: hit ratio from metrics: %v (using the relay's count)\n", setup, err)
		}
	}
	return p
}

// summarize turns the copies and relay counts into the point's figures.
func (e *cacheEnv) summarize(p *CachePoint, r *pointRun) {
	unique := map[int]bool{}
	var servedWarm int64
	for _, rec := range r.recs {
		p.Copies++
		if rec.err != nil {
			p.Failed++
			if p.FirstError == "" {
				p.FirstError = rec.err.Error()
			}
			continue
		}
		unique[rec.file] = true
		p.Served += rec.bytes
		if rec.warm {
			servedWarm += rec.bytes
			p.Warm.Bytes += overlapBytes(rec, r.warmStart, r.warmDeadline)
		} else {
			p.Cold.Bytes += rec.bytes
			p.FilesCold++
		}
	}
	p.Cold.Seconds = r.coldEnd.Sub(r.t0).Seconds()
	p.Warm.Seconds = r.warmDeadline.Sub(r.warmStart).Seconds()
	p.Cold.MBps = float64(p.Cold.Bytes) / p.Cold.Seconds / 1e6
	p.Warm.MBps = float64(p.Warm.Bytes) / p.Warm.Seconds / 1e6
	p.Cold.Upstream, p.Warm.Upstream = r.upCold, r.upAll-r.upCold
	p.Upstream = r.upAll
	p.Unique = int64(len(unique)) * e.cfg.FileSize
	if p.Unique > 0 {
		p.UpstreamPerUnique = float64(p.Upstream) / float64(p.Unique)
	}
	p.HitRatio, p.HitSource = hitRatio(p.Upstream, p.Served), "relay"
	p.WarmHitRatio = hitRatio(p.Warm.Upstream, servedWarm)
	p.ColdEnd = p.Cold.Seconds
	p.Series = series(r, e.cfg.Bin)
	if p.Cold.Bytes > 0 {
		p.CPUPerGBCold = r.cpuCold.Seconds() / (float64(p.Cold.Bytes) / 1e9)
	}
	if servedWarm > 0 {
		p.CPUPerGBWarm = r.cpuWarm.Seconds() / (float64(servedWarm) / 1e9)
	}
}

// hitRatio is 1 − upstream ÷ served, within [0, 1].
func hitRatio(upstream, served int64) float64 {
	if served <= 0 {
		return 0
	}
	return min(1, max(0, 1-float64(upstream)/float64(served)))
}

// overlapBytes is the share of rec's bytes that falls in [from, to),
// taking the copy's rate as even over its duration (xrdcp to /dev/null
// reports nothing until it ends).
func overlapBytes(rec copyRec, from, to time.Time) int64 {
	d := rec.end.Sub(rec.start)
	if d <= 0 {
		if !rec.end.Before(from) && rec.end.Before(to) {
			return rec.bytes
		}
		return 0
	}
	lo, hi := rec.start, rec.end
	if from.After(lo) {
		lo = from
	}
	if to.Before(hi) {
		hi = to
	}
	if !hi.After(lo) {
		return 0
	}
	return int64(float64(rec.bytes) * float64(hi.Sub(lo)) / float64(d))
}

// series bins the copies' bytes over time, each spread evenly over its
// copy's duration.
func series(r *pointRun, bin time.Duration) []sitebench.Sample {
	nb := int(r.end.Sub(r.t0)/bin) + 1
	out := make([]sitebench.Sample, nb)
	for i := range out {
		from := r.t0.Add(time.Duration(i) * bin)
		var b int64
		for _, rec := range r.recs {
			if rec.err == nil {
				b += overlapBytes(rec, from, from.Add(bin))
			}
		}
		out[i] = sitebench.Sample{T: float64(i) * bin.Seconds(), MBps: float64(b) / bin.Seconds() / 1e6}
	}
	// The last bin is partial: scale it to the time it covers, or drop it
	// when too short to say anything.
	switch last := r.end.Sub(r.t0.Add(time.Duration(nb-1) * bin)); {
	case last < bin/2:
		out = out[:nb-1]
	case last < bin:
		out[nb-1].MBps *= bin.Seconds() / last.Seconds()
	}
	return out
}

func lastLines(s string, n int) string {
	lines := []byte(s)
	count := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == '\n' {
			count++
			if count > n {
				return s[i+1:]
			}
		}
	}
	return s
}
