package fleet

import (
	"sort"
	"sync"
	"time"
)

// MatrixCell is the day's statistics of the probes from one box to
// another: the site-to-site throughput matrix regional operators keep.
type MatrixCell struct {
	From  string    `json:"from"`
	To    string    `json:"to"`
	Day   string    `json:"day"` // YYYY-MM-DD, UTC
	N     int       `json:"n"`
	Fails int       `json:"fails"`
	Avg   float64   `json:"avg_mbps"`
	Min   float64   `json:"min_mbps"`
	Max   float64   `json:"max_mbps"`
	Last  float64   `json:"last_mbps"`
	At    time.Time `json:"last_at"`
}

// matrixDays is how many days of probe statistics a director keeps.
const matrixDays = 14

// maxMatrixCells bounds the matrix: a member's probes name their targets,
// so new cells past it are not made (the ones kept still update).
const maxMatrixCells = 100_000

// Matrix accumulates the probe results boxes report in their
// advertisements. The zero value is ready; it is safe for concurrent use.
type Matrix struct {
	mu    sync.Mutex
	cells map[[3]string]*MatrixCell // from, to, day
	seen  map[string]time.Time      // from → newest result taken, so an ad repeated is not counted twice
}

// Record takes the probes box from reported, skipping the ones already
// taken from an earlier ad, and drops days older than two weeks.
func (m *Matrix) Record(from string, rs []ProbeResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cells == nil {
		m.cells, m.seen = map[[3]string]*MatrixCell{}, map[string]time.Time{}
	}
	newest := m.seen[from]
	for _, r := range rs {
		if !r.At.After(m.seen[from]) {
			continue
		}
		if r.At.After(newest) {
			newest = r.At
		}
		day := r.At.UTC().Format("2006-01-02")
		k := [3]string{from, r.To, day}
		c := m.cells[k]
		if c == nil && len(m.cells) >= maxMatrixCells {
			continue
		}
		if c == nil {
			c = &MatrixCell{From: from, To: r.To, Day: day}
			m.cells[k] = c
		}
		if r.Error != "" {
			c.Fails++
			continue
		}
		if c.N == 0 || r.MBps < c.Min {
			c.Min = r.MBps
		}
		if r.MBps > c.Max {
			c.Max = r.MBps
		}
		c.Avg = (c.Avg*float64(c.N) + r.MBps) / float64(c.N+1)
		c.N++
		if r.At.After(c.At) {
			c.Last, c.At = r.MBps, r.At
		}
	}
	m.seen[from] = newest
	cutoff := time.Now().UTC().AddDate(0, 0, -matrixDays).Format("2006-01-02")
	for k := range m.cells {
		if k[2] < cutoff {
			delete(m.cells, k)
		}
	}
}

// List returns the statistics, newest day first.
func (m *Matrix) List() []MatrixCell {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MatrixCell, 0, len(m.cells))
	for _, c := range m.cells {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Day != b.Day {
			return a.Day > b.Day
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	return out
}
