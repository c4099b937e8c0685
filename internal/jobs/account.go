package jobs

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is the accounting of a period, as site reports state it (the
// AGLT2 definitions): per class and in total, the jobs that ended, their
// CPU and wall time, CPU efficiency = CPU time ÷ core wall time, and the
// wall-time and CPU-time utilization of the box's cores = core wall time
// (or CPU time) ÷ the cores' time in the period. Only local jobs count
// towards the box's utilization; other domains are listed for their
// totals.
type Report struct {
	Since, Until time.Time
	Cores        int
	Rows         []ReportRow
}

// ReportRow is one class ("local users", "grid", "backfill"), a domain,
// or the total.
type ReportRow struct {
	Class      string  `json:"class"`
	Jobs       int     `json:"jobs"`
	Failed     int     `json:"failed"`
	CPUHours   float64 `json:"cpu_hours"`
	CoreWallH  float64 `json:"core_wall_hours"`
	Efficiency float64 `json:"cpu_efficiency"` // CPU ÷ core wall (of the jobs whose CPU is known)
	// CPUUnknown counts the jobs whose CPU their domain could not say:
	// left out of the efficiency, which is "unknown" if they are all.
	CPUUnknown   int     `json:"cpu_unknown_jobs,omitempty"`
	knownWallH   float64 // core wall of the jobs whose CPU is known
	WallUtil     float64 `json:"wall_utilization"` // core wall ÷ cores × period (local only)
	CPUUtil      float64 `json:"cpu_utilization"`  // CPU ÷ cores × period (local only)
	LocalCounted bool    `json:"local"`
}

// Report accounts the jobs that ran in [since, now]: each job's CPU and
// wall time clipped to the part of its run inside the period (a job that
// started before it counts only its share), so utilization never
// exceeds what the cores could give.
func (s *Service) Report(since time.Time) *Report {
	now := time.Now()
	r := &Report{Since: since, Until: now, Cores: s.cfg.CPUs}
	rows := map[string]*ReportRow{}
	row := func(name string, local bool) *ReportRow {
		if rows[name] == nil {
			rows[name] = &ReportRow{Class: name, LocalCounted: local}
		}
		return rows[name]
	}
	for _, j := range s.List(func(j *Job) bool { return j.State.Final() && !j.Finished.Before(since) }) {
		share := inPeriod(j, since, now)
		local := j.Domain == "local"
		class := "local users"
		switch {
		case j.Spec.Backfill:
			class = "backfill"
		case j.Grid:
			class = "grid"
		}
		if !local {
			class = "domain " + j.Domain
			if j.Domain == "" {
				class = "never started"
			}
		}
		for _, rr := range []*ReportRow{row(class, local), row("total (local)", true)} {
			if rr.Class == "total (local)" && !local {
				continue
			}
			rr.Jobs++
			if j.State != Completed {
				rr.Failed++
			}
			coreWallH := share * j.WallTime * float64(max(j.Spec.CPUs, 1)) / 3600
			rr.CoreWallH += coreWallH
			if j.CPUUnknown {
				rr.CPUUnknown++
				continue
			}
			rr.CPUHours += share * j.CPUTime / 3600
			rr.knownWallH += coreWallH
		}
	}
	avail := float64(r.Cores) * now.Sub(since).Hours()
	for _, rr := range rows {
		if rr.knownWallH > 0 {
			rr.Efficiency = rr.CPUHours / rr.knownWallH
		}
		if rr.LocalCounted && avail > 0 {
			rr.WallUtil = rr.CoreWallH / avail
			rr.CPUUtil = rr.CPUHours / avail
		}
		r.Rows = append(r.Rows, *rr)
	}
	sort.Slice(r.Rows, func(a, b int) bool {
		ta, tb := strings.HasPrefix(r.Rows[a].Class, "total"), strings.HasPrefix(r.Rows[b].Class, "total")
		if ta != tb {
			return tb
		}
		return r.Rows[a].Class < r.Rows[b].Class
	})
	return r
}

// Format renders the report as a table.
func (r *Report) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Jobs ended %s – %s (%s), %d local cores\n\n", r.Since.Format("2006-01-02 15:04"), r.Until.Format("2006-01-02 15:04"),
		r.Until.Sub(r.Since).Round(time.Minute), r.Cores)
	fmt.Fprintf(&b, "%-16s %6s %6s %10s %12s %10s %10s %10s\n", "CLASS", "JOBS", "FAILED", "CPU h", "CORE-WALL h", "CPU EFF", "WALL UTIL", "CPU UTIL")
	for _, rr := range r.Rows {
		util := func(v float64) string {
			if !rr.LocalCounted {
				return "—"
			}
			return fmt.Sprintf("%.1f%%", 100*v)
		}
		eff := "—"
		switch {
		case rr.knownWallH > 0:
			eff = fmt.Sprintf("%.1f%%", 100*rr.Efficiency)
		case rr.CPUUnknown > 0:
			eff = "unknown"
		}
		fmt.Fprintf(&b, "%-16s %6d %6d %10.2f %12.2f %10s %10s %10s\n", rr.Class, rr.Jobs, rr.Failed, rr.CPUHours, rr.CoreWallH, eff, util(rr.WallUtil), util(rr.CPUUtil))
	}
	b.WriteString("\nCPU EFF = CPU time ÷ core wall time; WALL UTIL and CPU UTIL = core wall time and CPU time ÷ (local cores × period).\n")
	return b.String()
}

// inPeriod is the share of j's run inside [since, until]: its run is the
// WallTime before it finished.
func inPeriod(j *Job, since, until time.Time) float64 {
	if j.WallTime <= 0 {
		return 1
	}
	end := j.Finished
	start := end.Add(-time.Duration(j.WallTime * float64(time.Second)))
	lo, hi := start, end
	if lo.Before(since) {
		lo = since
	}
	if hi.After(until) {
		hi = until
	}
	if !hi.After(lo) {
		return 0
	}
	return min(1, hi.Sub(lo).Seconds()/j.WallTime)
}

// Counts is the number of jobs per domain ("" while not placed) and state.
func (s *Service) Counts() map[string]map[State]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[State]int{}
	for _, j := range s.jobs {
		d := j.Domain
		if out[d] == nil {
			out[d] = map[State]int{}
		}
		out[d][j.State]++
	}
	return out
}
