package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memWriter is a WritableFile in memory that counts the writes in flight
// and can fail the write at one offset. Each write takes a moment, as a
// request's round trip does, so writes that may overlap do.
type memWriter struct {
	mu       sync.Mutex
	data     []byte
	inFlight atomic.Int32
	most     atomic.Int32
	writes   atomic.Int32
	failAt   int64 // -1: none
	took     time.Duration
}

func newMemWriter() *memWriter { return &memWriter{failAt: -1, took: 2 * time.Millisecond} }

func (w *memWriter) WriteAt(p []byte, off int64) (int, error) {
	w.writes.Add(1)
	n := w.inFlight.Add(1)
	defer w.inFlight.Add(-1)
	for m := w.most.Load(); n > m && !w.most.CompareAndSwap(m, n); m = w.most.Load() {
	}
	time.Sleep(w.took)
	if off == w.failAt {
		return 0, errors.New("disk full")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(w.data)) {
		w.data = append(w.data, make([]byte, end-int64(len(w.data)))...)
	}
	copy(w.data[off:], p)
	return len(p), nil
}

func (w *memWriter) ReadAt(p []byte, off int64) (int, error) { return 0, io.EOF }
func (w *memWriter) Stat() (FileInfo, error)                 { return FileInfo{}, nil }
func (w *memWriter) Close() error                            { return nil }
func (w *memWriter) Truncate(int64) error                    { return nil }
func (w *memWriter) Sync() error                             { return nil }

// parallelWriter takes several writes at once.
type parallelWriter struct {
	*memWriter
	window int
}

func (p parallelWriter) WritesInFlight() int { return p.window }

// hidingWrapper wraps a parallel writer and offers none of its
// capabilities: an upload through it must go one write at a time.
type hidingWrapper struct{ WritableFile }

func (hidingWrapper) As(any) bool { return false }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestUploadSequentialWithoutTheCapability(t *testing.T) {
	src := randomBytes(10*1000 + 7)
	for name, f := range map[string]WritableFile{
		"plain file":         newMemWriter(),
		"wrapper hiding one": hidingWrapper{parallelWriter{newMemWriter(), 8}},
	} {
		var told int
		n, err := Upload(f, bytes.NewReader(src), int64(len(src)), 1000, 8, func(k int) { told += k })
		if err != nil || n != int64(len(src)) || told != len(src) {
			t.Fatalf("%s: Upload = %d, %v (told of %d bytes), want %d, nil", name, n, err, told, len(src))
		}
		mw := f.(interface{ mem() *memWriter }).mem()
		if got := mw.most.Load(); got != 1 {
			t.Errorf("%s: %d writes in flight at once, want 1", name, got)
		}
		if !bytes.Equal(mw.data, src) {
			t.Errorf("%s: the file differs from the source", name)
		}
	}
}

func (w *memWriter) mem() *memWriter    { return w }
func (h hidingWrapper) mem() *memWriter { return h.WritableFile.(parallelWriter).memWriter }

func TestUploadKeepsTheWindowInFlight(t *testing.T) {
	src := randomBytes(64*1000 + 1)
	f := parallelWriter{newMemWriter(), 16}
	var told int
	n, err := Upload(f, bytes.NewReader(src), int64(len(src)), 1000, 4, func(k int) { told += k })
	if err != nil || n != int64(len(src)) || told != len(src) {
		t.Fatalf("Upload = %d, %v (told of %d bytes), want %d, nil", n, err, told, len(src))
	}
	if !bytes.Equal(f.data, src) {
		t.Fatal("the file differs from the source")
	}
	// 65 writes of 2 ms each: the window is used, and never exceeded.
	if most := f.most.Load(); most < 2 || most > 4 {
		t.Errorf("%d writes in flight at most, want 2 to 4 (the window)", most)
	}
	// The file's own limit wins over a larger window.
	g := parallelWriter{newMemWriter(), 2}
	if _, err := Upload(g, bytes.NewReader(src), int64(len(src)), 1000, 8, nil); err != nil {
		t.Fatal(err)
	}
	if most := g.most.Load(); most > 2 {
		t.Errorf("%d writes in flight, the file takes 2", most)
	}
}

func TestUploadStopsAtTheFirstFailure(t *testing.T) {
	src := randomBytes(100 * 1000)
	f := parallelWriter{newMemWriter(), 8}
	f.failAt = 30 * 1000
	n, err := Upload(f, bytes.NewReader(src), int64(len(src)), 1000, 4, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Upload error %v, want the write's", err)
	}
	if n != f.failAt {
		t.Errorf("Upload says %d bytes taken from 0, want %d (up to the failed chunk)", n, f.failAt)
	}
	// No chunk starts after the failure is known: beyond the failed one
	// (the 31st), only those started while it was in flight may have
	// gone, a window's worth or two, not the 69 left.
	if w := f.writes.Load(); w > 31+2*4 {
		t.Errorf("%d writes sent, want no more than %d", w, 31+2*4)
	}
}

func TestUploadRefusesAShortSource(t *testing.T) {
	src := randomBytes(5000)
	f := parallelWriter{newMemWriter(), 8}
	n, err := Upload(f, bytes.NewReader(src), 8000, 1000, 4, nil)
	if err == nil || !strings.Contains(err.Error(), "ended at byte 5000") {
		t.Fatalf("Upload error %v, want the source's end named", err)
	}
	if n != 5000 {
		t.Errorf("Upload says %d bytes taken, want 5000", n)
	}
	if _, err := Upload(f, bytes.NewReader(src), 10, 0, 4, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("chunk 0: %v, want ErrInvalid", err)
	}
}

func TestUploadOfNothing(t *testing.T) {
	f := parallelWriter{newMemWriter(), 8}
	if n, err := Upload(f, bytes.NewReader(nil), 0, 1000, 4, nil); n != 0 || err != nil {
		t.Fatalf("empty upload = %d, %v", n, err)
	}
	if w := f.writes.Load(); w != 0 {
		t.Errorf("%d writes for an empty file", w)
	}
}

// slowReader is a file whose reads take a moment each and counts those
// in flight; it can end early, as a file truncated while read.
type slowReader struct {
	data     []byte
	inFlight atomic.Int32
	most     atomic.Int32
}

func (r *slowReader) ReadAt(p []byte, off int64) (int, error) {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
	}
	time.Sleep(2 * time.Millisecond)
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	k := copy(p, r.data[off:])
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}
func (r *slowReader) Stat() (FileInfo, error) { return FileInfo{Size: int64(len(r.data))}, nil }
func (r *slowReader) Close() error            { return nil }

// memDst is an io.WriterAt in memory.
type memDst struct {
	mu   sync.Mutex
	data []byte
}

func (d *memDst) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(d.data)) {
		d.data = append(d.data, make([]byte, end-int64(len(d.data)))...)
	}
	return copy(d.data[off:], p), nil
}

func TestDownloadReadsInParallel(t *testing.T) {
	src := &slowReader{data: randomBytes(40*1000 + 3)}
	var dst memDst
	var told int
	if err := Download(t.Context(), src, &dst, int64(len(src.data)), 1000, 4, func(n int) { told += n }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst.data, src.data) || told != len(src.data) {
		t.Fatalf("downloaded %d bytes (told of %d), equal to the file: %v", len(dst.data), told, bytes.Equal(dst.data, src.data))
	}
	if most := src.most.Load(); most < 2 || most > 4 {
		t.Errorf("%d reads in flight at most, want 2 to 4 (the window)", most)
	}
}

func TestDownloadRefusesAShortFile(t *testing.T) {
	src := &slowReader{data: randomBytes(5000)}
	var dst memDst
	err := Download(t.Context(), src, &dst, 8000, 1000, 4, nil)
	// Whichever of the reads past the end fails first says so.
	if err == nil || !strings.Contains(err.Error(), "before the 8000 bytes") {
		t.Fatalf("Download error %v, want the file's end named", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Download(ctx, src, &dst, 5000, 1000, 4, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled download: %v, want context.Canceled", err)
	}
}
