package web

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// RecorderConfig sets how often totals are sampled and how much history
// is kept. Zero values take the defaults.
type RecorderConfig struct {
	// Interval between samples (default 5 s): the resolution of the rate
	// chart. Shorter is only useful in tests.
	Interval time.Duration
	// Window is how much history is kept (default 1 h); the ring holds
	// Window/Interval rates.
	Window time.Duration
}

// Validate names a setting that cannot work.
func (c RecorderConfig) Validate() error {
	switch {
	case c.Interval < 0:
		return fmt.Errorf("dashboard recorder: interval %v is negative", c.Interval)
	case c.Window < 0:
		return fmt.Errorf("dashboard recorder: window %v is negative", c.Window)
	case c.Window > 0 && c.Window < c.withDefaults().Interval:
		return fmt.Errorf("dashboard recorder: window %v is shorter than the interval %v", c.Window, c.withDefaults().Interval)
	}
	return nil
}

func (c RecorderConfig) withDefaults() RecorderConfig {
	if c.Interval == 0 {
		c.Interval = 5 * time.Second
	}
	if c.Window == 0 {
		c.Window = time.Hour
	}
	return c
}

// TotalsFunc returns the bytes moved so far, by "proto/in" and
// "proto/out"; the counters only grow (metrics.Transfers.Totals).
type TotalsFunc func() map[string]int64

// Recorder turns cumulative byte counters into rates over time: it keeps
// the last Window of samples in a ring, so memory stays fixed however
// long the box runs. The totals are sampled rather than rates being
// pushed by the frontends, so the hot data path pays nothing for the
// dashboard. Safe for concurrent use.
type Recorder struct {
	cfg    RecorderConfig
	totals TotalsFunc

	mu   sync.Mutex
	ring []sample // oldest at next once full
	next int
	full bool
}

type sample struct {
	at     time.Time // with the monotonic reading: rates survive clock steps
	totals map[string]int64
}

// ErrNoTotals is returned by NewRecorder without a totals function.
var ErrNoTotals = errors.New("dashboard recorder: no totals function")

// NewRecorder makes a recorder over totals; call Run to start sampling.
func NewRecorder(cfg RecorderConfig, totals TotalsFunc) (*Recorder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if totals == nil {
		return nil, ErrNoTotals
	}
	cfg = cfg.withDefaults()
	// One more sample than rates: n rates need n+1 samples.
	n := int(cfg.Window/cfg.Interval) + 1
	return &Recorder{cfg: cfg, totals: totals, ring: make([]sample, n)}, nil
}

// Run samples at once (the baseline the first rate is measured from),
// then every Interval, until ctx ends.
func (r *Recorder) Run(ctx context.Context) {
	r.sample(time.Now())
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.sample(now)
		}
	}
}

// sample records the totals as of now.
func (r *Recorder) sample(now time.Time) {
	tot := r.totals()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring[r.next] = sample{at: now, totals: tot}
	r.next++
	if r.next == len(r.ring) {
		r.next, r.full = 0, true
	}
}

// Rates is the transfer rate history, oldest first. Times[i] (Unix
// milliseconds) ends the interval whose rate, in bytes per second, is
// Series[key][i] for every key; a key that had not moved a byte yet
// reads 0.
type Rates struct {
	IntervalSeconds float64              `json:"interval_seconds"`
	WindowSeconds   float64              `json:"window_seconds"`
	Times           []int64              `json:"times"`
	Series          map[string][]float64 `json:"series"`
}

// Rates returns the history; empty until two samples exist.
func (r *Recorder) Rates() Rates {
	out := Rates{IntervalSeconds: r.cfg.Interval.Seconds(), WindowSeconds: r.cfg.Window.Seconds(),
		Times: []int64{}, Series: map[string][]float64{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	ordered := append([]sample(nil), r.ring[:r.next]...)
	if r.full {
		ordered = append(append([]sample(nil), r.ring[r.next:]...), ordered...)
	}
	if len(ordered) < 2 {
		return out
	}
	keys := map[string]bool{}
	for _, s := range ordered {
		for k := range s.totals {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out.Series[k] = make([]float64, 0, len(ordered)-1)
	}
	for i := 1; i < len(ordered); i++ {
		prev, cur := ordered[i-1], ordered[i]
		dt := cur.at.Sub(prev.at).Seconds()
		out.Times = append(out.Times, cur.at.UnixMilli())
		for _, k := range names {
			rate := 0.0
			// Missing keys are zero: a counter appears with its first byte.
			if d := cur.totals[k] - prev.totals[k]; d > 0 && dt > 0 {
				rate = float64(d) / dt
			}
			out.Series[k] = append(out.Series[k], rate)
		}
	}
	return out
}
