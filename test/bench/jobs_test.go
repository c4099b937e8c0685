package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
)

// TestJobsBenchEndToEnd runs the benchmark small against a real box: every
// job of both phases must complete and every rate be measured.
func TestJobsBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a box and runs 200 jobs")
	}
	bin := siteboxBinary(t)
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work := t.TempDir()
	// The box's slot users reach their sandboxes below it.
	for _, p := range []string{filepath.Dir(work), work} {
		os.Chmod(p, 0o711)
	}
	rep, err := Jobs(ctx, JobsConfig{Sitebox: bin, WorkDir: work, Jobs: 100, Clients: 4, Batch: true,
		Timeout: 2 * time.Minute, Out: &progress})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	table := FormatJobs(rep)
	t.Logf("\n%s", table)
	if len(rep.Phases) != 2 {
		t.Fatalf("%d phases, want 2", len(rep.Phases))
	}
	for _, p := range rep.Phases {
		t.Run(p.How, func(t *testing.T) {
			if p.Completed != 100 || p.Started != 100 || p.Failed != 0 || p.TimedOut {
				t.Errorf("completed %d, started %d, failed %d (%s), timed out %t; want 100, 100, 0",
					p.Completed, p.Started, p.Failed, p.FirstFailure, p.TimedOut)
			}
			for name, v := range map[string]float64{"accepted": p.AcceptedPerSec(), "started": p.StartedPerSec(), "completed": p.CompletedPerSec()} {
				if v <= 0 {
					t.Errorf("%s/s = %v, want > 0", name, v)
				}
			}
			if p.PeakRSS <= 0 || p.BoxCPU <= 0 {
				t.Errorf("box peak RSS %d, CPU %v: not measured", p.PeakRSS, p.BoxCPU)
			}
			if !strings.Contains(table, "| "+p.How+" |") {
				t.Errorf("table has no row for %q", p.How)
			}
		})
	}
	// Keep-alive: at most one connection per client in the first phase.
	if c := rep.Phases[0].Conns; c < 1 || c > 4 {
		t.Errorf("%d connections for 4 clients: keep-alive did not hold", c)
	}
	if !rep.Complete() {
		t.Error("report says not complete")
	}
}

// summarizeJobs counts only jobs that ran as started: end() stamps
// Started on jobs that failed before running.
func TestSummarizeJobs(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name                      string
		js                        []jobs.Job
		started, completed, fail  int
		startSpan, doneSpan       time.Duration
		startedPerSec, donePerSec float64
	}{
		{"two completed", []jobs.Job{
			{ID: "1.0", State: jobs.Completed, Submitted: at(0), Started: at(100), Finished: at(150)},
			{ID: "1.1", State: jobs.Completed, Submitted: at(10), Started: at(600), Finished: at(1000)},
		}, 2, 2, 0, 500 * time.Millisecond, time.Second, 4, 2},
		{"a failure before running", []jobs.Job{
			{ID: "1.0", State: jobs.Completed, Submitted: at(0), Started: at(100), Finished: at(500)},
			{ID: "1.1", State: jobs.Failed, Reason: "staging: x", Submitted: at(0), Started: at(900), Finished: at(900)},
		}, 1, 1, 1, 0, 500 * time.Millisecond, 0, 2},
		{"none ended", []jobs.Job{{ID: "1.0", State: jobs.Idle, Submitted: at(0)}}, 0, 0, 0, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &JobsPhase{Jobs: len(tt.js)}
			summarizeJobs(p, tt.js)
			if p.Started != tt.started || p.Completed != tt.completed || p.Failed != tt.fail {
				t.Errorf("started %d completed %d failed %d, want %d %d %d", p.Started, p.Completed, p.Failed, tt.started, tt.completed, tt.fail)
			}
			if p.StartSpan != tt.startSpan || p.DoneSpan != tt.doneSpan {
				t.Errorf("spans %v %v, want %v %v", p.StartSpan, p.DoneSpan, tt.startSpan, tt.doneSpan)
			}
			if p.StartedPerSec() != tt.startedPerSec || p.CompletedPerSec() != tt.donePerSec {
				t.Errorf("rates %v %v, want %v %v", p.StartedPerSec(), p.CompletedPerSec(), tt.startedPerSec, tt.donePerSec)
			}
			if tt.fail > 0 && !strings.Contains(p.FirstFailure, "staging: x") {
				t.Errorf("first failure %q does not carry the reason", p.FirstFailure)
			}
		})
	}
}
