// Package keptgo runs short jobs on goroutines kept between jobs.
//
// A new goroutine starts on a small stack and grows it copy by copy
// through the calls it makes. Where every job goes deep (a root://
// request routed by a director, a director's question to one of a
// thousand servers), that growth cost more than the work itself; a kept
// goroutine keeps its grown stack. At most maxIdle goroutines wait at a
// time, and one waiting longer than idleFor ends, so a burst of jobs
// leaves no crowd of goroutines behind for long.
package keptgo

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool runs jobs on kept goroutines. Its zero value is not usable: use New.
type Pool struct {
	jobs    chan func() // unbuffered: a send succeeds only into a waiting goroutine
	idle    atomic.Int32
	maxIdle int32
	idleFor time.Duration
	stop    chan struct{} // closed by Close: waiting goroutines end
	once    sync.Once
}

// New returns a pool keeping at most maxIdle waiting goroutines, each
// for at most idleFor.
func New(maxIdle int, idleFor time.Duration) *Pool {
	return &Pool{jobs: make(chan func()), maxIdle: int32(maxIdle), idleFor: idleFor, stop: make(chan struct{})}
}

// Go has job run by a waiting goroutine, or by a new one. It never
// blocks, and runs job even after Close (on a goroutine of its own).
func (p *Pool) Go(job func()) {
	select {
	case p.jobs <- job:
	default:
		go p.work(job)
	}
}

// Close ends the waiting goroutines; a job still running ends on its
// own. It may be called more than once.
func (p *Pool) Close() { p.once.Do(func() { close(p.stop) }) }

// Idle is the number of goroutines waiting for a job.
func (p *Pool) Idle() int { return int(p.idle.Load()) }

// work runs job, then waits for the next one while fewer than maxIdle
// others wait.
func (p *Pool) work(job func()) {
	var idle *time.Timer
	for {
		job()
		job = nil // keep nothing of the last job alive while waiting
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(p.idleFor)
		} else {
			idle.Reset(p.idleFor)
		}
		select {
		case job = <-p.jobs:
			p.idle.Add(-1)
		case <-idle.C:
			p.idle.Add(-1)
			return
		case <-p.stop:
			p.idle.Add(-1)
			idle.Stop()
			return
		}
	}
}
