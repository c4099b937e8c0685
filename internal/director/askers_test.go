package director

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every job runs; those of a second burst run on the askers the first
// left waiting; no more than maxIdle wait, and they end with the
// director.
func TestAskersRunEveryJobAndKeepFew(t *testing.T) {
	stop := make(chan struct{})
	a := newAskers(stop)
	a.maxIdle = 4
	var ran atomic.Int32
	var wg sync.WaitGroup
	burst := func(n int) {
		for range n {
			wg.Add(1)
			a.run(func() { ran.Add(1); wg.Done() })
		}
		wg.Wait()
	}
	burst(20)
	waitUntil(t, "four askers waiting", func() bool { return a.idle.Load() == 4 })
	burst(3)
	if got := ran.Load(); got != 23 {
		t.Fatalf("%d jobs ran, want 23", got)
	}
	waitUntil(t, "the askers of the second burst waiting again", func() bool { return a.idle.Load() == 4 })
	close(stop)
	waitUntil(t, "no asker waiting after the director closed", func() bool { return a.idle.Load() == 0 })
}

// A waiting asker ends after idleFor.
func TestAskersEndWhenIdle(t *testing.T) {
	a := newAskers(make(chan struct{}))
	a.idleFor = 500 * time.Millisecond
	done := make(chan struct{})
	a.run(func() { close(done) })
	<-done
	waitUntil(t, "the asker waiting", func() bool { return a.idle.Load() == 1 })
	waitUntil(t, "the idle asker gone", func() bool { return a.idle.Load() == 0 })
}
