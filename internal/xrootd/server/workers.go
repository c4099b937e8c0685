package server

import (
	"sync/atomic"
	"time"
)

// workers runs the concurrent requests of every session on goroutines
// kept between requests. A new goroutine starts on a small stack and grows
// it copy by copy through a request's calls (an open routed by a director
// goes deep); on a busy redirector that growth cost more than the routing
// itself. A kept goroutine keeps its grown stack.
//
// At most maxIdle wait at a time, and one waiting longer than idleFor
// ends, so a burst of requests leaves no crowd of goroutines behind.
type workers struct {
	jobs    chan func() // unbuffered: a send succeeds only into a waiting worker
	idle    atomic.Int32
	maxIdle int32
	idleFor time.Duration
	stop    chan struct{} // closed at Shutdown: waiting workers end
}

const (
	maxIdleWorkers  = 16
	workerIdleAfter = 2 * time.Second
)

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), maxIdle: maxIdleWorkers, idleFor: workerIdleAfter, stop: make(chan struct{})}
}

// run has job run by a waiting worker, or by a new one.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.work(job)
	}
}

// work runs job, then waits for the next one while fewer than maxIdle
// others wait.
func (w *workers) work(job func()) {
	var idle *time.Timer
	for {
		job()
		job = nil // keep nothing of the session alive while waiting
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(w.idleFor)
		} else {
			idle.Reset(w.idleFor)
		}
		select {
		case job = <-w.jobs:
			w.idle.Add(-1)
		case <-idle.C:
			w.idle.Add(-1)
			return
		case <-w.stop:
			w.idle.Add(-1)
			idle.Stop()
			return
		}
	}
}

// close ends the waiting workers; a job still running ends on its own.
func (w *workers) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}
