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
	out := Output{Waiting: map[string]string{}}
	freeCPU, freeMem := in.CPUs, in.MemoryMB
	gridCPU, stoppingCPU := 0, 0
	var backfill []Running
	for _, s := range in.Running {
		freeCPU -= s.Job.CPUs
		freeMem -= s.Job.MemoryMB
		if s.Job.Grid {
			gridCPU += s.Job.CPUs
		}
		if s.Stopping {
			stoppingCPU += s.Job.CPUs
		} else if s.Job.Backfill {
			backfill = append(backfill, s)
		}
	}
	prio := map[string]float64{}
	for _, j := range in.Idle {
		if _, ok := prio[j.Owner]; !ok {
			prio[j.Owner] = in.Priority(j.Owner)
		}
	}
	queue := newJobQueue(in.Idle, prio)
	// reserve sets aside what a real job will take once the jobs stopping
	// for it are gone: free CPUs first, then the stopping ones, so no
	// later job takes them meanwhile.
	stoppingMem := stoppedMem(in.Running)
	reserve := func(cpus int, mem int64) {
		fromFree := min(cpus, max(freeCPU, 0))
		freeCPU -= fromFree
		stoppingCPU -= cpus - fromFree
		memFree := min(mem, max(freeMem, 0))
		freeMem -= memFree
		stoppingMem -= mem - memFree
	}
	for {
		j := queue.pop()
		if j == nil {
			break
		}
		cpus, mem := j.CPUs, j.MemoryMB
		switch {
		case cpus > in.CPUs || mem > in.MemoryMB:
			out.Waiting[j.ID] = fmt.Sprintf("asks for %d CPUs and %d MB; the local domain has %d CPUs and %d MB in all", cpus, mem, in.CPUs, in.MemoryMB)
			continue
		case j.Grid && in.GridMaxCPUs > 0 && gridCPU+cpus > in.GridMaxCPUs:
			out.Waiting[j.ID] = fmt.Sprintf("grid jobs hold %d of the %d local CPUs they may use", gridCPU, in.GridMaxCPUs)
			continue
		case cpus <= freeCPU && mem <= freeMem:
			out.Start = append(out.Start, j)
			freeCPU -= cpus
			freeMem -= mem
			if j.Grid {
				gridCPU += cpus
			}
			// The owner's later jobs compete with the new standing.
			queue.charge(j.Owner, in.Projected(j))
			continue
		case j.Backfill:
			out.Waiting[j.ID] = fmt.Sprintf("backfill: waits for an idle slot (%d of %d CPUs free)", max(freeCPU, 0), in.CPUs)
			continue
		}
		// A real job that does not fit: backfill yields to it. Every
		// waiting real job takes its victims in the same round, so N real
		// jobs wait one grace period, not N.
		need := cpus - max(freeCPU, 0) - stoppingCPU
		if need <= 0 && mem <= max(freeMem, 0)+stoppingMem {
			out.Waiting[j.ID] = fmt.Sprintf("waits for %d CPUs being freed by jobs that are stopping", cpus-max(freeCPU, 0))
			reserve(cpus, mem)
			continue
		}
		victims := pickVictims(backfill, max(need, 0))
		if victims == nil {
			out.Waiting[j.ID] = fmt.Sprintf("waits for %d CPUs and %d MB (%d CPUs and %d MB free)", cpus, mem, max(freeCPU, 0), max(freeMem, 0))
			continue
		}
		for _, v := range victims {
			out.Preempt = append(out.Preempt, v.Job)
			stoppingCPU += v.Job.CPUs
			stoppingMem += v.Job.MemoryMB
		}
		backfill = backfill[len(victims):]
		out.Waiting[j.ID] = fmt.Sprintf("preempting %d backfill job(s) for its %d CPUs", len(victims), cpus)
		reserve(cpus, mem)
	}
	return out
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
