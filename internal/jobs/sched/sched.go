// Package sched is the policy of the job router's local domain: which
// idle jobs start now and which backfill jobs yield, as a pure function
// of the queue, the jobs running and the owners' recent usage.
package sched

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Job is what the scheduler knows of a job.
type Job struct {
	ID       string
	Owner    string // as fair share counts owners
	CPUs     int
	MemoryMB int64
	WallTime time.Duration // requested (0: unknown)
	Backfill bool          // runs only on idle slots, yields to real jobs
	Grid     bool          // from outside the site
	// Submitted orders jobs last; Started picks which backfill yields.
	Submitted, Started time.Time
}

// Running is a job holding local resources.
type Running struct {
	Job      *Job
	Stopping bool // being preempted or cancelled: its resources free soon
}

// Input is one scheduling round's view.
type Input struct {
	CPUs        int   // the local domain's CPUs
	MemoryMB    int64 // and memory
	GridMaxCPUs int   // CPUs grid jobs may hold (0: no cap)
	Running     []Running
	Idle        []*Job // jobs that may run locally, in any order
	// Priority is an owner's effective usage per share: lower goes first.
	Priority func(owner string) float64
	// Projected is what starting one job adds to its owner's priority, so
	// one round alternates between users of equal standing.
	Projected func(j *Job) float64
}

// Output is the round's decisions.
type Output struct {
	Start   []*Job
	Preempt []*Job            // backfill jobs to stop for a waiting real job
	Waiting map[string]string // why each idle job did not start
}

// Schedule decides which idle jobs start now and which backfill jobs
// yield. Order: real jobs before backfill, local users before grid, then
// fair share (lower effective usage per share first), then shorter
// requested wall time, then submission time.
func Schedule(in Input) Output {
	r := newRound(in)
	for {
		j := r.queue.pop()
		if j == nil {
			break
		}
		if !r.place(j) {
			r.makeRoom(j)
		}
	}
	return r.out
}

// round is the state of one Schedule call: what is free, held by grid
// jobs and being freed by stopping jobs, the backfill jobs that may
// still yield, the queue of idle jobs, and the decisions so far.
type round struct {
	in                            Input
	out                           Output
	freeCPU, gridCPU, stoppingCPU int
	freeMem, stoppingMem          int64
	backfill                      []Running
	queue                         *jobQueue
}

// newRound tallies what the running jobs hold (and which backfill jobs
// could yield), and queues the idle jobs by their owners' priority.
func newRound(in Input) *round {
	r := &round{in: in, out: Output{Waiting: map[string]string{}}, freeCPU: in.CPUs, freeMem: in.MemoryMB}
	for _, s := range in.Running {
		r.freeCPU -= s.Job.CPUs
		r.freeMem -= s.Job.MemoryMB
		if s.Job.Grid {
			r.gridCPU += s.Job.CPUs
		}
		if s.Stopping {
			r.stoppingCPU += s.Job.CPUs
		} else if s.Job.Backfill {
			r.backfill = append(r.backfill, s)
		}
	}
	prio := map[string]float64{}
	for _, j := range in.Idle {
		if _, ok := prio[j.Owner]; !ok {
			prio[j.Owner] = in.Priority(j.Owner)
		}
	}
	r.queue = newJobQueue(in.Idle, prio)
	r.stoppingMem = stoppedMem(in.Running)
	return r
}

// place decides j when no preemption is involved: it never fits, grid
// jobs are at their cap, it fits now (it starts), or it is backfill
// (it waits). It reports false for a real job that does not fit, which
// makeRoom then handles.
func (r *round) place(j *Job) bool {
	in, cpus, mem := r.in, j.CPUs, j.MemoryMB
	switch {
	case cpus > in.CPUs || mem > in.MemoryMB:
		r.out.Waiting[j.ID] = fmt.Sprintf("asks for %d CPUs and %d MB; the local domain has %d CPUs and %d MB in all", cpus, mem, in.CPUs, in.MemoryMB)
	case j.Grid && in.GridMaxCPUs > 0 && r.gridCPU+cpus > in.GridMaxCPUs:
		r.out.Waiting[j.ID] = fmt.Sprintf("grid jobs hold %d of the %d local CPUs they may use", r.gridCPU, in.GridMaxCPUs)
	case cpus <= r.freeCPU && mem <= r.freeMem:
		r.out.Start = append(r.out.Start, j)
		r.freeCPU -= cpus
		r.freeMem -= mem
		if j.Grid {
			r.gridCPU += cpus
		}
		// The owner's later jobs compete with the new standing.
		r.queue.charge(j.Owner, in.Projected(j))
	case j.Backfill:
		r.out.Waiting[j.ID] = fmt.Sprintf("backfill: waits for an idle slot (%d of %d CPUs free)", max(r.freeCPU, 0), in.CPUs)
	default:
		return false
	}
	return true
}

// makeRoom handles a real job that does not fit: backfill yields to it.
// Every waiting real job takes its victims in the same round, so N real
// jobs wait one grace period, not N.
func (r *round) makeRoom(j *Job) {
	cpus, mem := j.CPUs, j.MemoryMB
	need := cpus - max(r.freeCPU, 0) - r.stoppingCPU
	if need <= 0 && mem <= max(r.freeMem, 0)+r.stoppingMem {
		r.out.Waiting[j.ID] = fmt.Sprintf("waits for %d CPUs being freed by jobs that are stopping", cpus-max(r.freeCPU, 0))
		r.reserve(cpus, mem)
		return
	}
	victims := pickVictims(r.backfill, max(need, 0))
	if victims == nil {
		r.out.Waiting[j.ID] = fmt.Sprintf("waits for %d CPUs and %d MB (%d CPUs and %d MB free)", cpus, mem, max(r.freeCPU, 0), max(r.freeMem, 0))
		return
	}
	for _, v := range victims {
		r.out.Preempt = append(r.out.Preempt, v.Job)
		r.stoppingCPU += v.Job.CPUs
		r.stoppingMem += v.Job.MemoryMB
	}
	r.backfill = r.backfill[len(victims):]
	r.out.Waiting[j.ID] = fmt.Sprintf("preempting %d backfill job(s) for its %d CPUs", len(victims), cpus)
	r.reserve(cpus, mem)
}

// reserve sets aside what a real job will take once the jobs stopping
// for it are gone: free CPUs first, then the stopping ones, so no later
// job takes them meanwhile.
func (r *round) reserve(cpus int, mem int64) {
	fromFree := min(cpus, max(r.freeCPU, 0))
	r.freeCPU -= fromFree
	r.stoppingCPU -= cpus - fromFree
	memFree := min(mem, max(r.freeMem, 0))
	r.freeMem -= memFree
	r.stoppingMem -= mem - memFree
}

func stoppedMem(running []Running) int64 {
	var n int64
	for _, s := range running {
		if s.Stopping {
			n += s.Job.MemoryMB
		}
	}
	return n
}

// pickVictims chooses the backfill jobs that started last until they
// free need CPUs, or nil when all of them would not.
func pickVictims(backfill []Running, need int) []Running {
	sort.SliceStable(backfill, func(a, b int) bool { return backfill[a].Job.Started.After(backfill[b].Job.Started) })
	var out []Running
	for _, s := range backfill {
		if need <= 0 {
			break
		}
		out = append(out, s)
		need -= s.Job.CPUs
	}
	if need > 0 {
		return nil
	}
	return out
}

// Before is the queue order, with prio the owners' priorities.
func Before(a, b *Job, prio map[string]float64) bool {
	if a.Backfill != b.Backfill {
		return !a.Backfill
	}
	if a.Grid != b.Grid {
		return !a.Grid
	}
	if pa, pb := prio[a.Owner], prio[b.Owner]; math.Abs(pa-pb) > 1e-9*math.Max(1, math.Max(pa, pb)) {
		return pa < pb
	}
	if wa, wb := wallOrMax(a), wallOrMax(b); wa != wb {
		return wa < wb
	}
	if !a.Submitted.Equal(b.Submitted) {
		return a.Submitted.Before(b.Submitted)
	}
	return idLess(a.ID, b.ID)
}

// idLess orders "cluster.process" ids numerically (x.2 before x.10);
// ids that are not numbers compare as strings.
func idLess(a, b string) bool {
	ac, ap, _ := strings.Cut(a, ".")
	bc, bp, _ := strings.Cut(b, ".")
	if ac != bc {
		return numLess(ac, bc)
	}
	return numLess(ap, bp)
}

func numLess(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA != nil || errB != nil {
		return a < b
	}
	return x < y
}

// wallOrMax is the requested wall time; a job that gave none counts as
// long, so jobs saying they are short go first.
func wallOrMax(j *Job) time.Duration {
	if j.WallTime > 0 {
		return j.WallTime
	}
	return time.Duration(math.MaxInt64)
}
