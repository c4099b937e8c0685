package director

import (
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/fleet"
)

// LocateBuckets are the upper bounds (seconds) of the locate latency
// histogram: a search asks every candidate server in parallel, so its
// time is the slowest answer (or the deadline).
var LocateBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// stats counts what the director decided, for metrics.
type stats struct {
	mu        sync.Mutex
	decisions map[string]int64 // site, cache, replica, parent, vo, wait, not_found, down, loop
	buckets   []int64          // locate searches per LocateBuckets bound (not cumulative)
	searches  int64
	sum       float64
	// Signed advertisements over the API: accepted and refused, and the
	// registry entries the accepted ones set (a director's own and those
	// of the servers below it), so an operator sees whether ads are
	// absorbed as fast as they come.
	adsAccepted, adsRefused, adServers atomic.Int64
	// First opens the holdings filters pointed to the servers to ask:
	// found among them, or asked of every server after all.
	filtersFound, filtersMissed atomic.Int64
}

// advertised counts one advertisement answered: accepted, setting
// entries registry entries, or refused.
func (s *stats) advertised(accepted bool, entries int) {
	if !accepted {
		s.adsRefused.Add(1)
		return
	}
	s.adsAccepted.Add(1)
	s.adServers.Add(int64(entries))
}

func (s *stats) count(kind string) {
	s.mu.Lock()
	if s.decisions == nil {
		s.decisions = map[string]int64{}
	}
	s.decisions[kind]++
	s.mu.Unlock()
}

func (s *stats) searched(start time.Time) {
	d := time.Since(start).Seconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets == nil {
		s.buckets = make([]int64, len(LocateBuckets))
	}
	for i, b := range LocateBuckets {
		if d <= b {
			s.buckets[i]++
			break
		}
	}
	s.searches++
	s.sum += d
}

// Stats is a snapshot of the director's counters.
type Stats struct {
	Decisions map[string]int64 `json:"decisions"` // by kind: site, cache, replica, parent, vo, wait, not_found, down, loop
	// Locate searches: count, total seconds, and counts per LocateBuckets
	// bound, cumulative as Prometheus histograms are.
	Searches      int64             `json:"searches"`
	SearchSeconds float64           `json:"search_seconds"`
	Buckets       map[float64]int64 `json:"-"`
	Servers       int               `json:"servers"`
	ServersDown   int               `json:"servers_down"`
	// Advertisements received over the API, accepted and refused, and
	// the registry entries the accepted ones set.
	AdsAccepted int64 `json:"ads_accepted"`
	AdsRefused  int64 `json:"ads_refused"`
	AdServers   int64 `json:"ad_servers"`
	// Reads whose search the holdings filters narrowed: answered by the
	// servers they pointed to, or not (then every server was asked).
	FiltersFound  int64 `json:"filters_found"`
	FiltersMissed int64 `json:"filters_missed"`
}

// Matrix returns the site-to-site probe statistics, newest day first.
func (d *Director) Matrix() []fleet.MatrixCell { return d.matrix.List() }

// Stats returns the counters and the registry's size.
func (d *Director) Stats() Stats {
	d.stats.mu.Lock()
	st := Stats{Decisions: map[string]int64{}, Searches: d.stats.searches, SearchSeconds: d.stats.sum, Buckets: map[float64]int64{}}
	for k, v := range d.stats.decisions {
		st.Decisions[k] = v
	}
	var cum int64
	for i, b := range LocateBuckets {
		if d.stats.buckets != nil {
			cum += d.stats.buckets[i]
		}
		st.Buckets[b] = cum
	}
	d.stats.mu.Unlock()
	st.AdsAccepted, st.AdsRefused, st.AdServers = d.stats.adsAccepted.Load(), d.stats.adsRefused.Load(), d.stats.adServers.Load()
	st.FiltersFound, st.FiltersMissed = d.stats.filtersFound.Load(), d.stats.filtersMissed.Load()
	st.Servers, st.ServersDown = d.reg.count(time.Now())
	return st
}
