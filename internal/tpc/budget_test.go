package tpc

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
)

// trickleFile is a source of size bytes whose reads fill all of their
// buffer but its last byte at once and then hold it until released (or
// the read's context ends): the source of the attack, which makes every
// stream's buffer nearly full and keeps it. It counts the bytes of the
// buffers its reads hold, which are the copy buffers in use.
type trickleFile struct {
	size    int64
	release chan struct{}
	held    atomic.Int64 // bytes of buffers inside ReadAt now
	peak    atomic.Int64
	reads   atomic.Int64
}

func newTrickle(size int64) *trickleFile {
	return &trickleFile{size: size, release: make(chan struct{})}
}

func (f *trickleFile) ReadAt(p []byte, off int64) (int, error) {
	return f.ReadAtContext(context.Background(), p, off)
}

func (f *trickleFile) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	f.reads.Add(1)
	n := f.held.Add(int64(len(p)))
	for {
		old := f.peak.Load()
		if n <= old || f.peak.CompareAndSwap(old, n) {
			break
		}
	}
	defer f.held.Add(-int64(len(p)))
	for i := range p[:len(p)-1] {
		p[i] = byte(off + int64(i))
	}
	select {
	case <-f.release:
		p[len(p)-1] = byte(off + int64(len(p)-1))
		return len(p), nil
	case <-ctx.Done():
		return len(p) - 1, ctx.Err()
	}
}

func (f *trickleFile) Stat() (store.FileInfo, error) { return store.FileInfo{Size: f.size}, nil }
func (f *trickleFile) Close() error                  { return nil }

// discard is a sink that drops what it is given.
type discard struct{ written atomic.Int64 }

func (d *discard) WriteAt(p []byte, off int64) (int, error) {
	d.written.Add(int64(len(p)))
	return len(p), nil
}
func (d *discard) ReadAt([]byte, int64) (int, error) { return 0, store.ErrUnsupported }
func (d *discard) Stat() (store.FileInfo, error)     { return store.FileInfo{}, nil }
func (d *discard) Close() error                      { return nil }
func (d *discard) Truncate(int64) error              { return nil }
func (d *discard) Sync() error                       { return nil }
func (d *discard) sink() Sink                        { return Sink{File: d, Abort: func(context.Context) {}} }
func (f *trickleFile) source() Source                { return Source{File: f, Size: f.size} }

// seatedCopies is how many copies hold a seat in b.
func seatedCopies(b *Budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range b.seats {
		n += k
	}
	return n
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTricklingPullsBoundedByBudget is the attack: 24 copies asking for
// 16 streams each from a source that sends almost 4 MiB per range and
// then holds it. Without a box-wide bound that is 24 × 16 × 4 MiB =
// 1.5 GiB of buffers; with a budget the buffers in use (counted at the
// source, and by the budget) stay within it, copies past it wait, and
// when the copies end every byte is returned.
func TestTricklingPullsBoundedByBudget(t *testing.T) {
	const limit = 64 << 20
	b := NewBudget(limit)
	src := newTrickle(64 << 20) // 16 chunks: work for all 16 streams
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- (&Job{Src: src.source(), Dst: (&discard{}).sink(), Streams: MaxStreams, Buffers: b}).Run(ctx)
		}()
	}
	// Every copy that got a seat is reading; the rest wait for one.
	waitFor(t, "the budget to fill and every copy to take a seat or wait", func() bool {
		st := b.Stats()
		return st.InUse+chunk > limit && st.Waiting > 0 && seatedCopies(b)+st.Waiting == 24
	})
	time.Sleep(200 * time.Millisecond) // let any unbounded stream show itself
	st := b.Stats()
	if held := src.peak.Load(); held > limit {
		t.Errorf("buffers held at the source peaked at %d MiB, over the %d MiB budget", held>>20, limit>>20)
	}
	if st.InUse > limit {
		t.Errorf("budget in use %d MiB > limit %d MiB", st.InUse>>20, limit>>20)
	}
	seated := int64(seatedCopies(b))
	if seated*chunk > limit || seated == 0 {
		t.Errorf("%d copies seated, %d waiting", seated, st.Waiting)
	}
	t.Logf("in use %d MiB of %d, %d copies waiting, source holds %d MiB", st.InUse>>20, limit>>20, st.Waiting, src.held.Load()>>20)

	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("copy ended with %v, want context.Canceled", err)
		}
	}
	if st := b.Stats(); st.InUse != 0 || st.Waiting != 0 {
		t.Fatalf("after the copies: %+v, want nothing in use or waiting", st)
	}
}

// TestBufferMemoryReturned: once copies end nothing keeps their buffers,
// so the collector gets the memory back.
func TestBufferMemoryReturned(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // the pool's victim cache is dropped on the second
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	b := NewBudget(64 << 20)
	src := newTrickle(64 << 20)
	close(src.release) // a source that answers at once
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &discard{}
			if err := (&Job{Src: src.source(), Dst: d.sink(), Streams: MaxStreams, Buffers: b}).Run(context.Background()); err != nil || d.written.Load() != src.size {
				t.Errorf("copy: %v, %d bytes", err, d.written.Load())
			}
		}()
	}
	wg.Wait()
	if after := heap(); after > before+8<<20 {
		t.Errorf("heap %d MiB after the copies, %d MiB before: buffers kept", after>>20, before>>20)
	}
}

// TestSmallFileSmallBuffer: a file smaller than a chunk gets one buffer
// of its own size, however many streams are asked for.
func TestSmallFileSmallBuffer(t *testing.T) {
	b := NewBudget(64 << 20)
	src := newTrickle(1000)
	done := make(chan error, 1)
	go func() {
		done <- (&Job{Src: src.source(), Dst: (&discard{}).sink(), Streams: MaxStreams, Buffers: b}).Run(context.Background())
	}()
	waitFor(t, "the read", func() bool { return src.reads.Load() == 1 })
	time.Sleep(50 * time.Millisecond)
	if st := b.Stats(); st.InUse != 1000 || src.held.Load() != 1000 {
		t.Errorf("a 1000-byte file holds %d bytes of budget, %d at the source; want 1000", st.InUse, src.held.Load())
	}
	close(src.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if src.reads.Load() != 1 {
		t.Errorf("%d reads of a one-chunk file", src.reads.Load())
	}
}

// TestBudgetRefusalNamesLimit: a copy that cannot get memory in time is
// refused with an error naming the limit and the setting that raises it;
// so is one that finds the queue full.
func TestBudgetRefusalNamesLimit(t *testing.T) {
	b := NewBudget(MinBudget)
	b.wait = 100 * time.Millisecond
	hold := newTrickle(chunk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := make(chan error, 1)
	go func() {
		running <- (&Job{Src: hold.source(), Dst: (&discard{}).sink(), Buffers: b}).Run(ctx)
	}()
	waitFor(t, "the first copy's read", func() bool { return hold.reads.Load() == 1 })

	other := newTrickle(chunk)
	err := (&Job{Src: other.source(), Dst: (&discard{}).sink(), Buffers: b}).Run(context.Background())
	if !errors.Is(err, ErrBuffersFull) || !errors.Is(err, store.ErrBusy) {
		t.Fatalf("second copy: %v, want ErrBuffersFull", err)
	}
	for _, want := range []string{"4.0 MiB of [tpc] buffer_memory", "waited 100ms", "raise [tpc] buffer_memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if other.reads.Load() != 0 {
		t.Error("the refused copy read its source")
	}

	// A full queue refuses at once.
	b.wait = time.Minute
	qctx, qcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range maxWaiting {
		wg.Add(1)
		go func() {
			defer wg.Done()
			(&Job{Src: newTrickle(chunk).source(), Dst: (&discard{}).sink(), Buffers: b}).Run(qctx)
		}()
	}
	waitFor(t, "the queue to fill", func() bool { return b.Stats().Waiting == maxWaiting })
	start := time.Now()
	err = (&Job{Src: other.source(), Dst: (&discard{}).sink(), Buffers: b}).Run(context.Background())
	if !errors.Is(err, ErrBuffersFull) || !strings.Contains(err.Error(), "256 more copies wait already") || time.Since(start) > time.Second {
		t.Errorf("copy past a full queue: %v after %v, want an immediate refusal", err, time.Since(start))
	}
	qcancel()
	wg.Wait()
	if st := b.Stats(); st.Waiting != 0 || st.Refused != 2 {
		t.Errorf("after the queue left: %+v, want none waiting and 2 refused (cancelled waits are not refusals)", st)
	}
	cancel()
	<-running
	if st := b.Stats(); st.InUse != 0 {
		t.Errorf("%d bytes still in use", st.InUse)
	}
}

// TestWaitingCopyGoesFirst: while a copy waits for a seat, the extra
// streams of running copies take no more memory, so a waiting copy gets
// the next chunk's worth that is given back; and a quarter of the budget
// is kept from extra streams, so a new copy starts without waiting for
// them.
func TestWaitingCopyGoesFirst(t *testing.T) {
	b := NewBudget(8 * chunk)
	src := newTrickle(64 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		first <- (&Job{Src: src.source(), Dst: (&discard{}).sink(), Streams: MaxStreams, Buffers: b}).Run(ctx)
	}()
	waitFor(t, "the first copy's streams", func() bool { return src.reads.Load() == 6 })
	time.Sleep(50 * time.Millisecond)
	if st := b.Stats(); st.InUse != 6*chunk {
		t.Fatalf("one copy with 16 streams holds %d MiB of a 32 MiB budget, want 24 (a quarter kept free)", st.InUse>>20)
	}
	// A second copy is seated at once from the quarter kept free.
	src2 := newTrickle(64 << 20)
	second := make(chan error, 1)
	go func() {
		second <- (&Job{Src: src2.source(), Dst: (&discard{}).sink(), Streams: MaxStreams, Buffers: b}).Run(ctx)
	}()
	waitFor(t, "the second copy's read", func() bool { return src2.reads.Load() == 1 })
	cancel()
	<-first
	<-second
}
