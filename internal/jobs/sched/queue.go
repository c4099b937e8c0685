package sched

import (
	"container/heap"
	"sort"
)

// jobQueue hands out idle jobs in the scheduler's order (see Before)
// while owners' priorities change as their jobs start: each owner's jobs
// are sorted once, and a heap of owners, keyed by their next job, picks
// who is next. A round costs O(n log owners), not a sort per start.
type jobQueue struct {
	prio   map[string]float64
	owners ownerHeap
	byName map[string]*ownerQueue
}

// ownerQueue is one owner's jobs of one class, in order.
type ownerQueue struct {
	jobs []*Job
	idx  int // in the heap
}

func newJobQueue(idle []*Job, prio map[string]float64) *jobQueue {
	q := &jobQueue{prio: prio, byName: map[string]*ownerQueue{}}
	q.owners.q = q
	for _, j := range idle {
		k := queueKey(j)
		oq := q.byName[k]
		if oq == nil {
			oq = &ownerQueue{}
			q.byName[k] = oq
		}
		oq.jobs = append(oq.jobs, j)
	}
	for _, oq := range q.byName {
		sort.SliceStable(oq.jobs, func(a, b int) bool { return Before(oq.jobs[a], oq.jobs[b], prio) })
		oq.idx = len(q.owners.list)
		q.owners.list = append(q.owners.list, oq)
	}
	heap.Init(&q.owners)
	return q
}

// queueKey separates an owner's jobs by class, since backfill and grid
// status order before the owner's standing does.
func queueKey(j *Job) string {
	k := j.Owner + "\x00"
	if j.Backfill {
		k += "b"
	}
	if j.Grid {
		k += "g"
	}
	return k
}

// pop returns the next job, or nil when none is left.
func (q *jobQueue) pop() *Job {
	if len(q.owners.list) == 0 {
		return nil
	}
	oq := q.owners.list[0]
	j := oq.jobs[0]
	oq.jobs = oq.jobs[1:]
	if len(oq.jobs) == 0 {
		heap.Pop(&q.owners)
	} else {
		heap.Fix(&q.owners, 0)
	}
	return j
}

// charge raises owner's standing after one of its jobs started.
func (q *jobQueue) charge(owner string, by float64) {
	q.prio[owner] += by
	for _, oq := range q.byName {
		if len(oq.jobs) > 0 && oq.jobs[0].Owner == owner && oq.idx >= 0 {
			heap.Fix(&q.owners, oq.idx)
		}
	}
}

// ownerHeap orders owner queues by their next job.
type ownerHeap struct {
	q    *jobQueue
	list []*ownerQueue
}

func (h *ownerHeap) Len() int { return len(h.list) }
func (h *ownerHeap) Less(a, b int) bool {
	return Before(h.list[a].jobs[0], h.list[b].jobs[0], h.q.prio)
}
func (h *ownerHeap) Swap(a, b int) {
	h.list[a], h.list[b] = h.list[b], h.list[a]
	h.list[a].idx, h.list[b].idx = a, b
}
func (h *ownerHeap) Push(x any) {
	oq := x.(*ownerQueue)
	oq.idx = len(h.list)
	h.list = append(h.list, oq)
}
func (h *ownerHeap) Pop() any {
	n := len(h.list)
	oq := h.list[n-1]
	h.list = h.list[:n-1]
	oq.idx = -1
	return oq
}
