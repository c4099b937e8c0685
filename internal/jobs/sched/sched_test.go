package sched

import (
	"strings"
	"testing"
	"time"
)

func job(id, owner string, cpus int, mut ...func(*Job)) *Job {
	j := &Job{ID: id, Owner: owner, Submitted: time.Unix(1000, 0), CPUs: cpus, MemoryMB: 100}
	for _, m := range mut {
		m(j)
	}
	return j
}

func ids(js []*Job) string {
	s := ""
	for _, j := range js {
		s += j.ID + " "
	}
	return s
}

func TestScheduleOrder(t *testing.T) {
	usage := map[string]float64{"heavy": 1e6, "light": 0}
	in := func(cpus int, running []Running, idle ...*Job) Input {
		return Input{CPUs: cpus, MemoryMB: 1 << 20, Running: running, Idle: idle,
			Priority:  func(o string) float64 { return usage[o] },
			Projected: func(*Job) float64 { return 10 }}
	}
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"light user before heavy", in(1, nil, job("h", "heavy", 1), job("l", "light", 1)), "l "},
		{"local users before grid", in(1, nil, job("g", "light", 1, func(j *Job) { j.Grid = true }), job("u", "heavy", 1)), "u "},
		{"short before long at equal share", in(1, nil,
			job("long", "a", 1, func(j *Job) { j.WallTime = time.Hour }),
			job("short", "a", 1, func(j *Job) { j.WallTime = time.Minute })), "short "},
		{"real before backfill", in(1, nil, job("b", "light", 1, func(j *Job) { j.Backfill = true }), job("r", "heavy", 1)), "r "},
		{"equal users alternate within a round", in(4, nil, job("a1", "a", 1), job("a2", "a", 1), job("a3", "a", 1), job("b1", "b", 1), job("b2", "b", 1)),
			"a1 b1 a2 b2 "},
		{"a big job waits, a small one fits", in(2, []Running{{Job: job("r", "x", 1)}}, job("big", "a", 2), job("small", "b", 1)), "small "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Schedule(tt.in)
			if got := ids(out.Start); got != tt.want {
				t.Errorf("started %q, want %q (waiting %v)", got, tt.want, out.Waiting)
			}
		})
	}
}

func TestScheduleGridCap(t *testing.T) {
	grid := func(j *Job) { j.Grid = true }
	out := Schedule(Input{CPUs: 4, MemoryMB: 1 << 20, GridMaxCPUs: 2,
		Running:  []Running{{Job: job("g0", "x", 1, grid)}},
		Idle:     []*Job{job("g1", "y", 1, grid), job("g2", "y", 1, grid), job("l1", "z", 1)},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if got := ids(out.Start); got != "l1 g1 " {
		t.Errorf("started %q, want the local job and one grid job", got)
	}
	if w := out.Waiting["g2"]; w != "grid jobs hold 2 of the 2 local CPUs they may use" {
		t.Errorf("g2 waits because %q", w)
	}
}

// Real jobs that do not fit preempt the backfill jobs that started last,
// just enough of them for every waiting real job in the same round (so N
// real jobs wait one grace period, not N), and nothing else starts
// meanwhile.
func TestSchedulePreemptsBackfill(t *testing.T) {
	bf := func(start int) func(*Job) {
		return func(j *Job) { j.Backfill = true; j.Started = time.Unix(int64(start), 0) }
	}
	running := []Running{{Job: job("b1", "z", 1, bf(1))}, {Job: job("b2", "z", 1, bf(2))}, {Job: job("b3", "z", 1, bf(3))}, {Job: job("r", "y", 1)}}
	out := Schedule(Input{CPUs: 4, MemoryMB: 1 << 20, Running: running,
		Idle:     []*Job{job("real", "a", 2), job("small", "b", 1)},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if len(out.Start) != 0 {
		t.Errorf("started %s while preempting", ids(out.Start))
	}
	if got := ids(out.Preempt); got != "b3 b2 b1 " {
		t.Errorf("preempted %q, want the two backfill jobs that started last for real, the last for small", got)
	}
	// Next round, the victims are Stopping: no more preemption.
	for i := range running {
		if running[i].Job.ID != "r" {
			running[i].Stopping = true
		}
	}
	out = Schedule(Input{CPUs: 4, MemoryMB: 1 << 20, Running: running, Idle: []*Job{job("real", "a", 2)},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if len(out.Preempt) != 0 || len(out.Start) != 0 {
		t.Errorf("second round: preempt %s start %s", ids(out.Preempt), ids(out.Start))
	}
	// A backfill job never preempts anyone.
	out = Schedule(Input{CPUs: 1, MemoryMB: 1 << 20, Running: []Running{{Job: job("b", "z", 1, bf(1))}},
		Idle:     []*Job{job("b9", "a", 1, bf(9))},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if len(out.Preempt) != 0 || out.Waiting["b9"] == "" {
		t.Errorf("backfill job: preempt %s, waiting %q", ids(out.Preempt), out.Waiting["b9"])
	}
}

func TestScheduleTooBig(t *testing.T) {
	out := Schedule(Input{CPUs: 2, MemoryMB: 1000, Idle: []*Job{job("huge", "a", 8)},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if w := out.Waiting["huge"]; w == "" || len(out.Start) != 0 {
		t.Errorf("a job larger than the domain: %q", w)
	}
}

// Fair share converges: two users with equal shares and equal demand end
// up with equal usage, whatever their start; with 2:1 shares, 2:1.
func TestFairShareConverges(t *testing.T) {
	for _, tc := range []struct {
		shares map[string]float64
		want   float64 // a's usage ÷ b's
	}{
		{map[string]float64{"a": 1, "b": 1}, 1},
		{map[string]float64{"a": 2, "b": 1}, 2},
	} {
		usage := map[string]float64{"a": 0, "b": 500} // b starts heavy
		var got map[string]float64 = map[string]float64{}
		for step := 0; step < 2000; step++ {
			// One slot; the winner runs one unit.
			out := Schedule(Input{CPUs: 1, MemoryMB: 1 << 20,
				Idle:      []*Job{job("a", "a", 1), job("b", "b", 1)},
				Priority:  func(o string) float64 { return usage[o] / tc.shares[o] },
				Projected: func(*Job) float64 { return 1 }})
			w := out.Start[0].Owner
			usage[w]++
			if step >= 1000 {
				got[w]++
			}
		}
		ratio := got["a"] / got["b"]
		if ratio < tc.want*0.95 || ratio > tc.want*1.05 {
			t.Errorf("shares %v: a:b = %.2f over the second half, want %.1f", tc.shares, ratio, tc.want)
		}
	}
}

// Two real jobs preempt two backfill jobs in one round; a later real job
// never takes the CPUs being freed for an earlier one.
func TestSchedulePreemptsForEveryRealJobAtOnce(t *testing.T) {
	bf := func(j *Job) { j.Backfill = true }
	running := []Running{{Job: job("b1", "z", 1, bf)}, {Job: job("b2", "z", 1, bf)}}
	out := Schedule(Input{CPUs: 2, MemoryMB: 1 << 20, Running: running,
		Idle:     []*Job{job("r1", "a", 1), job("r2", "b", 1)},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if len(out.Preempt) != 2 || len(out.Start) != 0 {
		t.Errorf("preempt %q start %q, want both backfill jobs preempted at once", ids(out.Preempt), ids(out.Start))
	}
	running[0].Stopping, running[1].Stopping = true, true
	out = Schedule(Input{CPUs: 2, MemoryMB: 1 << 20, Running: running,
		Idle:     []*Job{job("r1", "a", 1), job("r2", "b", 1), job("r3", "c", 1)},
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 1 }})
	if len(out.Preempt) != 0 || len(out.Start) != 0 {
		t.Errorf("while stopping: preempt %q start %q", ids(out.Preempt), ids(out.Start))
	}
	if w := out.Waiting["r3"]; !strings.Contains(w, "waits for 1 CPUs and") {
		t.Errorf("r3 waits because %q", w)
	}
}

// Procs of a cluster start in numeric order: x.2 before x.10.
func TestScheduleProcsInNumericOrder(t *testing.T) {
	var idle []*Job
	for _, p := range []string{"7.10", "7.2", "7.1", "10.0", "7.0"} {
		idle = append(idle, job(p, "a", 1))
	}
	out := Schedule(Input{CPUs: 5, MemoryMB: 1 << 20, Idle: idle,
		Priority: func(string) float64 { return 0 }, Projected: func(*Job) float64 { return 0 }})
	if got := ids(out.Start); got != "7.0 7.1 7.2 7.10 10.0 " {
		t.Errorf("started in order %q", got)
	}
}
