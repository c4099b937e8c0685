package director

import (
	"sync/atomic"
	"time"
)

// askers run a search's questions to the servers, one per server at
// once, on goroutines kept between searches. A new goroutine starts on
// a small stack and grows it copy by copy down the root:// client's
// calls: with a thousand servers asked per first open, that growth was
// a fifth of the director's CPU time for the search (as it was for the
// root:// server's requests, which keep their goroutines the same way).
// A kept goroutine keeps its grown stack.
//
// At most maxIdle wait at a time, and one waiting longer than idleFor
// ends, so a search leaves no crowd of goroutines behind for long.
type askers struct {
	jobs    chan func() // unbuffered: a send succeeds only into a waiting asker
	idle    atomic.Int32
	maxIdle int32
	idleFor time.Duration
	stop    <-chan struct{} // closed when the director closes: waiting askers end
}

const (
	// maxIdleAskers keeps enough for a search of a thousand servers;
	// each kept one holds its stack (a few KiB) for at most
	// askerIdleAfter.
	maxIdleAskers  = 1024
	askerIdleAfter = 2 * time.Second
)

func newAskers(stop <-chan struct{}) *askers {
	return &askers{jobs: make(chan func()), maxIdle: maxIdleAskers, idleFor: askerIdleAfter, stop: stop}
}

// run has job run by a waiting asker, or by a new one.
func (a *askers) run(job func()) {
	select {
	case a.jobs <- job:
	default:
		go a.work(job)
	}
}

// work runs job, then waits for the next one while fewer than maxIdle
// others wait.
func (a *askers) work(job func()) {
	var idle *time.Timer
	for {
		job()
		job = nil // keep nothing of the search alive while waiting
		if a.idle.Add(1) > a.maxIdle {
			a.idle.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(a.idleFor)
		} else {
			idle.Reset(a.idleFor)
		}
		select {
		case job = <-a.jobs:
			a.idle.Add(-1)
		case <-idle.C:
			a.idle.Add(-1)
			return
		case <-a.stop:
			a.idle.Add(-1)
			idle.Stop()
			return
		}
	}
}
