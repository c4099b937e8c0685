package jobs

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// The local domain's scheduler is a pure function of the queue, the jobs
// running and the users' recent usage, so its policy is testable on its
// own: who goes first, what fits, which backfill job yields.

// localSlot is a job holding local resources.
type localSlot struct {
	job      *Job
	stopping bool // being preempted or cancelled: its resources free soon
}

// schedInput is one scheduling round's view.
type schedInput struct {
	cpus        int   // the local domain's CPUs
	memMB       int64 // and memory
	gridMaxCPUs int   // CPUs grid jobs may hold (0: no cap)
	running     []localSlot
	idle        []*Job // jobs that may run locally, in any order
	// priority is an owner's effective usage per share: lower goes first.
	priority func(owner string) float64
	// projected is what starting one job adds to its owner's priority, so
	// one round alternates between users of equal standing.
	projected func(j *Job) float64
}

// schedOutput is the round's decisions.
type schedOutput struct {
	start   []*Job
	preempt []*Job            // backfill jobs to stop for a waiting real job
	waiting map[string]string // why each idle job did not start
}

// schedule decides which idle jobs start now and which backfill jobs
// yield. Order: real jobs before backfill, local users before grid, then
// fair share (lower effective usage per share first), then shorter
// requested wall time, then submission time.
func schedule(in schedInput) schedOutput {
	out := schedOutput{waiting: map[string]string{}}
	freeCPU, freeMem := in.cpus, in.memMB
	gridCPU, stoppingCPU := 0, 0
	var backfill []localSlot
	for _, s := range in.running {
		freeCPU -= s.job.Spec.CPUs
		freeMem -= s.job.Spec.MemoryMB
		if s.job.Grid {
			gridCPU += s.job.Spec.CPUs
		}
		if s.stopping {
			stoppingCPU += s.job.Spec.CPUs
		} else if s.job.Spec.Backfill {
			backfill = append(backfill, s)
		}
	}
	prio := map[string]float64{}
	for _, j := range in.idle {
		if _, ok := prio[ownerKey(j)]; !ok {
			prio[ownerKey(j)] = in.priority(ownerKey(j))
		}
	}
	queue := newJobQueue(in.idle, prio)
	preempting := false
	for {
		j := queue.pop()
		if j == nil {
			break
		}
		cpus, mem := j.Spec.CPUs, j.Spec.MemoryMB
		switch {
		case cpus > in.cpus || mem > in.memMB:
			out.waiting[j.ID] = fmt.Sprintf("asks for %d CPUs and %d MB; the local domain has %d CPUs and %d MB in all", cpus, mem, in.cpus, in.memMB)
			continue
		case preempting:
			out.waiting[j.ID] = "behind a job for which backfill is being preempted"
			continue
		case j.Grid && in.gridMaxCPUs > 0 && gridCPU+cpus > in.gridMaxCPUs:
			out.waiting[j.ID] = fmt.Sprintf("grid jobs hold %d of the %d local CPUs they may use", gridCPU, in.gridMaxCPUs)
			continue
		case cpus <= freeCPU && mem <= freeMem:
			out.start = append(out.start, j)
			freeCPU -= cpus
			freeMem -= mem
			if j.Grid {
				gridCPU += cpus
			}
			// The owner's later jobs compete with the new standing.
			queue.charge(ownerKey(j), in.projected(j))
			continue
		case j.Spec.Backfill:
			out.waiting[j.ID] = fmt.Sprintf("backfill: waits for an idle slot (%d of %d CPUs free)", max(freeCPU, 0), in.cpus)
			continue
		}
		// A real job that does not fit: backfill yields to it.
		need := cpus - freeCPU - stoppingCPU
		if need <= 0 && mem <= freeMem+stoppedMem(in.running) {
			out.waiting[j.ID] = fmt.Sprintf("waits for %d CPUs being freed by jobs that are stopping", cpus-max(freeCPU, 0))
			preempting = true
			continue
		}
		victims := pickVictims(backfill, need)
		if victims == nil {
			out.waiting[j.ID] = fmt.Sprintf("waits for %d CPUs and %d MB (%d CPUs and %d MB free)", cpus, mem, max(freeCPU, 0), max(freeMem, 0))
			continue
		}
		for _, v := range victims {
			out.preempt = append(out.preempt, v.job)
			stoppingCPU += v.job.Spec.CPUs
		}
		out.waiting[j.ID] = fmt.Sprintf("preempting %d backfill job(s) for its %d CPUs", len(victims), cpus)
		preempting = true
	}
	return out
}

func stoppedMem(running []localSlot) int64 {
	var n int64
	for _, s := range running {
		if s.stopping {
			n += s.job.Spec.MemoryMB
		}
	}
	return n
}

// pickVictims chooses the backfill jobs that started last until they
// free need CPUs, or nil when all of them would not.
func pickVictims(backfill []localSlot, need int) []localSlot {
	sort.SliceStable(backfill, func(a, b int) bool { return backfill[a].job.Started.After(backfill[b].job.Started) })
	var out []localSlot
	for _, s := range backfill {
		if need <= 0 {
			break
		}
		out = append(out, s)
		need -= s.job.Spec.CPUs
	}
	if need > 0 {
		return nil
	}
	return out
}

// before is the queue order.
func before(a, b *Job, prio map[string]float64) bool {
	if a.Spec.Backfill != b.Spec.Backfill {
		return !a.Spec.Backfill
	}
	if a.Grid != b.Grid {
		return !a.Grid
	}
	if pa, pb := prio[ownerKey(a)], prio[ownerKey(b)]; math.Abs(pa-pb) > 1e-9*math.Max(1, math.Max(pa, pb)) {
		return pa < pb
	}
	if wa, wb := wallOrMax(a), wallOrMax(b); wa != wb {
		return wa < wb
	}
	if !a.Submitted.Equal(b.Submitted) {
		return a.Submitted.Before(b.Submitted)
	}
	return a.ID < b.ID
}

// wallOrMax is the requested wall time; a job that gave none counts as
// long, so jobs saying they are short go first.
func wallOrMax(j *Job) time.Duration {
	if j.Spec.WallTime > 0 {
		return j.Spec.WallTime
	}
	return time.Duration(math.MaxInt64)
}
