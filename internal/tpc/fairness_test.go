package tpc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
)

// blockedSink takes no data until cancelled: a destination that stopped
// reading while keeping its connection.
type blockedSink struct {
	discard
	cancelled chan struct{}
	once      sync.Once
}

func (s *blockedSink) WriteAt(p []byte, off int64) (int, error) {
	<-s.cancelled
	return 0, errors.New("upload cancelled")
}

func (s *blockedSink) sink() Sink {
	return Sink{File: s, Sequential: true, Abort: func(context.Context) {},
		Cancel: func() { s.once.Do(func() { close(s.cancelled) }) }}
}

// TestStaleChunkCut: a chunk may take its time while nobody waits for
// memory; once a copy waits, a chunk that has held its buffer longer than
// the stale time is cut off — a trickling source and a destination that
// stopped reading alike — and the waiting copy runs.
func TestStaleChunkCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  func() *Job
	}{
		{"trickling source", func() *Job { return &Job{Src: newTrickle(chunk).source(), Dst: (&discard{}).sink()} }},
		{"stalled destination", func() *Job {
			src := newTrickle(chunk)
			close(src.release)
			return &Job{Src: src.source(), Dst: (&blockedSink{cancelled: make(chan struct{})}).sink()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(MinBudget)
			b.stale = 100 * time.Millisecond
			slow := tc.job()
			slow.Buffers = b
			slowDone := make(chan error, 1)
			go func() { slowDone <- slow.Run(context.Background()) }()
			waitFor(t, "the slow copy's seat", func() bool { return b.Stats().InUse == chunk })
			select {
			case err := <-slowDone:
				t.Fatalf("the slow copy ended with nobody waiting: %v", err)
			case <-time.After(300 * time.Millisecond):
			}

			fast := newTrickle(chunk)
			close(fast.release)
			d := &discard{}
			start := time.Now()
			if err := (&Job{Src: fast.source(), Dst: d.sink(), Buffers: b}).Run(context.Background()); err != nil || d.written.Load() != chunk {
				t.Fatalf("waiting copy: %v, %d bytes", err, d.written.Load())
			}
			t.Logf("the waiting copy ran after %v", time.Since(start).Round(time.Millisecond))
			err := <-slowDone
			if !errors.Is(err, ErrTooSlow) || !strings.Contains(err.Error(), "[tpc] buffer_memory") {
				t.Errorf("slow copy: %v, want ErrTooSlow naming the budget", err)
			}
			if st := b.Stats(); st.Cut != 1 || st.InUse != 0 {
				t.Errorf("stats %+v, want one cut and nothing in use", st)
			}
		})
	}
}

// TestSeatsFairAcrossClients: when a seat comes free, the waiting copy
// of the client holding the fewest seats gets it, though another
// client's copy waited longer.
func TestSeatsFairAcrossClients(t *testing.T) {
	b := NewBudget(2 * chunk)
	as := func(client string) context.Context {
		return store.WithRequest(context.Background(), &store.Request{Client: client})
	}
	hogs := []*trickleFile{newTrickle(chunk), newTrickle(chunk), newTrickle(chunk)}
	results := make(chan string, 4)
	run := func(ctx context.Context, src *trickleFile, name string) {
		go func() {
			(&Job{Src: src.source(), Dst: (&discard{}).sink(), Buffers: b}).Run(ctx)
			results <- name
		}()
	}
	run(as("192.0.2.66"), hogs[0], "hog 0")
	run(as("192.0.2.66"), hogs[1], "hog 1")
	waitFor(t, "two seats", func() bool { return b.Stats().InUse == 2*chunk })
	run(as("192.0.2.66"), hogs[2], "hog 2")
	waitFor(t, "the hog's third copy waiting", func() bool { return b.Stats().Waiting == 1 })
	other := newTrickle(chunk)
	run(as("198.51.100.7"), other, "other")
	waitFor(t, "the other client's copy waiting", func() bool { return b.Stats().Waiting == 2 })

	close(hogs[0].release)
	if got := <-results; got != "hog 0" {
		t.Fatalf("%s ended first", got)
	}
	waitFor(t, "a seat granted", func() bool { return other.reads.Load()+hogs[2].reads.Load() == 1 })
	if other.reads.Load() != 1 || hogs[2].reads.Load() != 0 {
		t.Errorf("the freed seat went to the client holding the most (other read %d, hog read %d)", other.reads.Load(), hogs[2].reads.Load())
	}
	close(hogs[1].release)
	close(hogs[2].release)
	close(other.release)
	for range 3 {
		<-results
	}
}
