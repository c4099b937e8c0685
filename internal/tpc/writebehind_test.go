package tpc

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a range starter that records what it was asked.
type recorder struct {
	mu     sync.Mutex
	ranges [][2]int64
	gate   chan struct{} // if set, each call waits for a receive
	err    error
}

func (r *recorder) start(off, n int64) error {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ranges = append(r.ranges, [2]int64{off, n})
	return r.err
}

func (r *recorder) got() [][2]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ranges)
}

func TestWriteBehindStartsEveryRange(t *testing.T) {
	r := &recorder{}
	w := runWriteBehind(r.start)
	want := [][2]int64{{0, chunk}, {2 * chunk, chunk}, {chunk, chunk}, {3 * chunk, 17}}
	for _, rg := range want {
		w.wrote(rg[0], rg[1])
	}
	w.wrote(4*chunk, 0) // nothing written: nothing to start
	w.stop(true)
	if got := r.got(); !slices.Equal(got, want) {
		t.Errorf("started %v, want %v", got, want)
	}
}

// The copy never waits for the disk: with the worker stuck, handing it
// more ranges than it queues returns at once, and the surplus is left
// to the landing.
func TestWriteBehindNeverBlocksTheCopy(t *testing.T) {
	r := &recorder{gate: make(chan struct{})}
	w := runWriteBehind(r.start)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range int64(3 * writeBehindQueue) {
			w.wrote(i*chunk, chunk)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("wrote blocked on a stuck worker")
	}
	close(r.gate)
	w.stop(true)
	if n := len(r.got()); n < 1 || n > writeBehindQueue+1 {
		t.Errorf("started %d ranges, want between 1 and %d", n, writeBehindQueue+1)
	}
}

// A failed copy starts nothing more: its temporary is removed anyway.
func TestWriteBehindStopsAfterFailedCopy(t *testing.T) {
	r := &recorder{gate: make(chan struct{})}
	w := runWriteBehind(r.start)
	for i := range int64(5) {
		w.wrote(i*chunk, chunk)
	}
	stopped := make(chan struct{})
	go func() { w.stop(false); close(stopped) }()
	// Let stop mark the copy failed before the first range goes through.
	for !w.skip.Load() {
		runtime.Gosched()
	}
	close(r.gate) // lets through the range the worker may have taken before
	<-stopped
	if n := len(r.got()); n > 1 {
		t.Errorf("started %d ranges after the copy failed, want at most 1", n)
	}
}

// A file system that refuses is asked once, then left alone.
func TestWriteBehindGivesUpAfterError(t *testing.T) {
	r := &recorder{err: errors.New("not supported")}
	w := runWriteBehind(r.start)
	for i := range int64(4) {
		w.wrote(i*chunk, chunk)
	}
	w.stop(true)
	if n := len(r.got()); n != 1 {
		t.Errorf("asked %d times after an error, want 1", n)
	}
}

// On Linux the range writer starts writes of a real file.
func TestRangeWriter(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := rangeWriter(f.Fd())
	if start == nil {
		t.Skip("no sync_file_range on " + runtime.GOOS)
	}
	data := make([]byte, 1<<20)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := start(0, int64(len(data))); err != nil {
		t.Errorf("starting writes: %v", err)
	}
}
