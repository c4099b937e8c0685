package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
)

// The targets for the job router on 2 cores. Reported, not
// asserted: they depend on the machine.
const (
	targetAcceptedPerSec = 200.0
	targetStartedPerSec  = 50.0
)

// AcceptedPerSec is jobs over the time to the last 201.
func (p JobsPhase) AcceptedPerSec() float64 { return perSec(p.Jobs, p.Accept) }

// StartedPerSec is jobs over first to last start, as the issue defines
// it: the rate the scheduler launches work once the queue is full.
func (p JobsPhase) StartedPerSec() float64 { return perSec(p.Started, p.StartSpan) }

// CompletedPerSec is completed jobs over first submission to last end.
func (p JobsPhase) CompletedPerSec() float64 { return perSec(p.Completed, p.DoneSpan) }

func perSec(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// summarizeJobs fills the counts and spans from the box's records.
func summarizeJobs(p *JobsPhase, js []jobs.Job) {
	var firstSub, firstStart, lastStart, lastEnd time.Time
	for _, j := range js {
		if firstSub.IsZero() || j.Submitted.Before(firstSub) {
			firstSub = j.Submitted
		}
		switch {
		case j.State == jobs.Completed:
			p.Completed++
		case j.State.Final():
			p.Failed++
			if p.FirstFailure == "" {
				p.FirstFailure = fmt.Sprintf("%s %s: %s", j.ID, j.State, j.Reason)
			}
		}
		// end() stamps Started on jobs that failed before running: only
		// jobs that ran count as started.
		if j.Started.IsZero() || j.State != jobs.Completed && j.State != jobs.Running {
			continue
		}
		p.Started++
		if firstStart.IsZero() || j.Started.Before(firstStart) {
			firstStart = j.Started
		}
		lastStart = later(lastStart, j.Started)
		lastEnd = later(lastEnd, j.Finished)
	}
	p.StartSpan = lastStart.Sub(firstStart)
	if !lastEnd.IsZero() {
		p.DoneSpan = lastEnd.Sub(firstSub)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// childCPUTime is the CPU (user + system) of pid's reaped children — for
// the box, the job supervisors and, through them, the jobs — from
// cutime and cstime in /proc/<pid>/stat; peers.CPUTime counts only the
// process itself.
func childCPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("pid %d: malformed stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, fmt.Errorf("pid %d: short stat", pid)
	}
	// After ')': state(0) … utime(11) stime(12) cutime(13) cstime(14),
	// in USER_HZ ticks (100 on every Linux Go runs on).
	cu, err1 := strconv.ParseInt(f[13], 10, 64)
	cs, err2 := strconv.ParseInt(f[14], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pid %d: bad child cpu times in stat", pid)
	}
	return time.Duration(cu+cs) * time.Second / 100, nil
}

// FormatJobs renders the report as Markdown: the conditions, one row per
// phase with the targets marked, the main phase's verdict and anything
// that did not complete.
func FormatJobs(r *JobsReport) string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "%d jobs per phase, each `/bin/true` (1 CPU, 64 MB), submitted over https:// (HTTP/1.1 keep-alive, bearer token) to one sitebox box "+
		"whose local domain has %d CPUs; the client polls GET %s every 200 ms until all have ended. Loopback, %d CPUs shared by client, box and jobs.\n\n",
		c.Jobs, c.CPUs, jobsapi.Prefix, r.CPUs)
	fmt.Fprintf(&b, "| submission | requests (conns) | accept time | accepted/s (≥ %.0f) | started/s (≥ %.0f) | completed/s | end to end | box CPU per job (during accept) | supervisor + job CPU per job | box peak RSS |\n",
		targetAcceptedPerSec, targetStartedPerSec)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "| %s | %d (%d) | %s | %s | %s | %.1f | %s | %s (%s) | %s | %s |\n",
			p.How, p.Requests, p.Conns, p.Accept.Round(time.Millisecond),
			verdict(p.AcceptedPerSec(), targetAcceptedPerSec, true, "%.0f"),
			verdict(p.StartedPerSec(), targetStartedPerSec, true, "%.1f"),
			p.CompletedPerSec(), p.DoneSpan.Round(10*time.Millisecond),
			perJob(p.BoxCPU, p.Jobs), perJob(p.AcceptCPU, p.Jobs), perJob(p.ChildCPU, p.Jobs), rssText(p.PeakRSS))
	}
	b.WriteString("\naccepted/s: jobs ÷ (first request sent → last 201). started/s: jobs ÷ (first → last `started` stamped by the box). " +
		"completed/s and end to end: first `submitted` → last `finished`. CPU per job: the box process (/proc/<pid>/stat) over the whole phase, " +
		"and its reaped children (the `sitebox job-exec` supervisors with their jobs). Peak RSS is the box's VmHWM at the end of the phase.\n")
	if len(r.Phases) > 0 {
		p := r.Phases[0]
		fmt.Fprintf(&b, "\nTargets (%s): ≥ %.0f jobs/s accepted: %s; ≥ %.0f jobs/s started: %s.\n", p.How,
			targetAcceptedPerSec, verdict(p.AcceptedPerSec(), targetAcceptedPerSec, true, "%.0f"),
			targetStartedPerSec, verdict(p.StartedPerSec(), targetStartedPerSec, true, "%.1f"))
	}
	for _, p := range r.Phases {
		if p.TimedOut || p.Failed > 0 {
			fmt.Fprintf(&b, "\n**%s: %d of %d jobs completed, %d failed", p.How, p.Completed, p.Jobs, p.Failed)
			if p.TimedOut {
				fmt.Fprintf(&b, ", the rest still queued or running after %v", c.Timeout)
			}
			b.WriteString(".**")
			if p.FirstFailure != "" {
				fmt.Fprintf(&b, " First failure: %s", p.FirstFailure)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Complete reports whether every job of every phase completed.
func (r *JobsReport) Complete() bool {
	for _, p := range r.Phases {
		if p.TimedOut || p.Completed != p.Jobs {
			return false
		}
	}
	return len(r.Phases) > 0
}

func perJob(d time.Duration, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(n)/1e6)
}
