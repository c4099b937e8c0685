package jobs

import (
	"testing"
	"time"

	"sitebox/internal/jobs/spec"
)

func job(id, owner string, cpus int, mut ...func(*Job)) *Job {
	j := &Job{ID: id, Owner: owner, State: Idle, Submitted: time.Unix(1000, 0),
		Spec: spec.Spec{CPUs: cpus, MemoryMB: 100, Domains: []string{"local"}}}
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
	in := func(cpus int, running []localSlot, idle ...*Job) schedInput {
		return schedInput{cpus: cpus, memMB: 1 << 20, running: running, idle: idle,
			priority:  func(o string) float64 { return usage[o] },
			projected: func(*Job) float64 { return 10 }}
	}
	tests := []struct {
		name string
		in   schedInput
		want string
	}{
		{"light user before heavy", in(1, nil, job("h", "heavy", 1), job("l", "light", 1)), "l "},
		{"local users before grid", in(1, nil, job("g", "light", 1, func(j *Job) { j.Grid = true }), job("u", "heavy", 1)), "u "},
		{"short before long at equal share", in(1, nil,
			job("long", "a", 1, func(j *Job) { j.Spec.WallTime = time.Hour }),
			job("short", "a", 1, func(j *Job) { j.Spec.WallTime = time.Minute })), "short "},
		{"real before backfill", in(1, nil, job("b", "light", 1, func(j *Job) { j.Spec.Backfill = true }), job("r", "heavy", 1)), "r "},
		{"equal users alternate within a round", in(4, nil, job("a1", "a", 1), job("a2", "a", 1), job("a3", "a", 1), job("b1", "b", 1), job("b2", "b", 1)),
			"a1 b1 a2 b2 "},
		{"a big job waits, a small one fits", in(2, []localSlot{{job: job("r", "x", 1)}}, job("big", "a", 2), job("small", "b", 1)), "small "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := schedule(tt.in)
			if got := ids(out.start); got != tt.want {
				t.Errorf("started %q, want %q (waiting %v)", got, tt.want, out.waiting)
			}
		})
	}
}

func TestScheduleGridCap(t *testing.T) {
	grid := func(j *Job) { j.Grid = true }
	out := schedule(schedInput{cpus: 4, memMB: 1 << 20, gridMaxCPUs: 2,
		running:  []localSlot{{job: job("g0", "x", 1, grid)}},
		idle:     []*Job{job("g1", "y", 1, grid), job("g2", "y", 1, grid), job("l1", "z", 1)},
		priority: func(string) float64 { return 0 }, projected: func(*Job) float64 { return 1 }})
	if got := ids(out.start); got != "l1 g1 " {
		t.Errorf("started %q, want the local job and one grid job", got)
	}
	if w := out.waiting["g2"]; w != "grid jobs hold 2 of the 2 local CPUs they may use" {
		t.Errorf("g2 waits because %q", w)
	}
}

// A real job that does not fit preempts the backfill jobs that started
// last, just enough of them, and nothing else starts meanwhile.
func TestSchedulePreemptsBackfill(t *testing.T) {
	bf := func(start int) func(*Job) {
		return func(j *Job) { j.Spec.Backfill = true; j.Started = time.Unix(int64(start), 0) }
	}
	running := []localSlot{{job: job("b1", "z", 1, bf(1))}, {job: job("b2", "z", 1, bf(2))}, {job: job("b3", "z", 1, bf(3))}, {job: job("r", "y", 1)}}
	out := schedule(schedInput{cpus: 4, memMB: 1 << 20, running: running,
		idle:     []*Job{job("real", "a", 2), job("small", "b", 1)},
		priority: func(string) float64 { return 0 }, projected: func(*Job) float64 { return 1 }})
	if len(out.start) != 0 {
		t.Errorf("started %s while preempting", ids(out.start))
	}
	if got := ids(out.preempt); got != "b3 b2 " {
		t.Errorf("preempted %q, want the two backfill jobs that started last", got)
	}
	// Next round, the victims are stopping: no more preemption.
	for i := range running {
		if running[i].job.ID == "b2" || running[i].job.ID == "b3" {
			running[i].stopping = true
		}
	}
	out = schedule(schedInput{cpus: 4, memMB: 1 << 20, running: running, idle: []*Job{job("real", "a", 2)},
		priority: func(string) float64 { return 0 }, projected: func(*Job) float64 { return 1 }})
	if len(out.preempt) != 0 || len(out.start) != 0 {
		t.Errorf("second round: preempt %s start %s", ids(out.preempt), ids(out.start))
	}
	// A backfill job never preempts anyone.
	out = schedule(schedInput{cpus: 1, memMB: 1 << 20, running: []localSlot{{job: job("b", "z", 1, bf(1))}},
		idle:     []*Job{job("b9", "a", 1, bf(9))},
		priority: func(string) float64 { return 0 }, projected: func(*Job) float64 { return 1 }})
	if len(out.preempt) != 0 || out.waiting["b9"] == "" {
		t.Errorf("backfill job: preempt %s, waiting %q", ids(out.preempt), out.waiting["b9"])
	}
}

func TestScheduleTooBig(t *testing.T) {
	out := schedule(schedInput{cpus: 2, memMB: 1000, idle: []*Job{job("huge", "a", 8)},
		priority: func(string) float64 { return 0 }, projected: func(*Job) float64 { return 1 }})
	if w := out.waiting["huge"]; w == "" || len(out.start) != 0 {
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
			out := schedule(schedInput{cpus: 1, memMB: 1 << 20,
				idle:      []*Job{job("a", "a", 1), job("b", "b", 1)},
				priority:  func(o string) float64 { return usage[o] / tc.shares[o] },
				projected: func(*Job) float64 { return 1 }})
			w := out.start[0].Owner
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
