package keptgo

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every job runs; those of a second burst run on the goroutines the
// first left waiting; no more than maxIdle wait, and they end at Close.
func TestRunEveryJobAndKeepFew(t *testing.T) {
	p := New(4, time.Minute)
	var ran atomic.Int32
	var wg sync.WaitGroup
	burst := func(n int) {
		for range n {
			wg.Add(1)
			p.Go(func() { ran.Add(1); wg.Done() })
		}
		wg.Wait()
	}
	burst(20)
	waitUntil(t, "four goroutines waiting", func() bool { return p.Idle() == 4 })
	burst(3)
	if got := ran.Load(); got != 23 {
		t.Fatalf("%d jobs ran, want 23", got)
	}
	waitUntil(t, "the goroutines of the second burst waiting again", func() bool { return p.Idle() == 4 })
	p.Close()
	p.Close()
	waitUntil(t, "none waiting after Close", func() bool { return p.Idle() == 0 })
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done // a job given after Close still runs
}

// A waiting goroutine ends after idleFor.
func TestEndWhenIdle(t *testing.T) {
	p := New(4, 200*time.Millisecond)
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
	waitUntil(t, "the goroutine waiting", func() bool { return p.Idle() == 1 })
	waitUntil(t, "the idle goroutine gone", func() bool { return p.Idle() == 0 })
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
