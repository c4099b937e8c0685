package tpc_test

import (
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/tpc"
)

// countedRanges streams ranges of a file as a remote source does and
// counts the ranged reads asked of it. Past stallAt its bodies wait for
// their request's context instead of giving data; short cuts the answer
// of the read starting at 0 by that many bytes.
type countedRanges struct {
	store.File
	reads   *atomic.Int32
	stallAt int64
	short   int64
}

func (c countedRanges) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	c.reads.Add(1)
	if off == 0 {
		n -= c.short
	}
	var r io.Reader = io.NewSectionReader(c.File, off, n)
	if c.stallAt > 0 && off+n > c.stallAt {
		r = io.MultiReader(io.NewSectionReader(c.File, off, c.stallAt-off), stalled{ctx})
	}
	return io.NopCloser(r), nil
}

type stalled struct{ ctx context.Context }

func (s stalled) Read([]byte) (int, error) {
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

// TestCopyHeldRange: a one-stream copy from a source that allows a
// window takes its chunks from one ranged read per window (bytes and
// checksum checked as ever); a copy with more streams asks for each
// chunk; an answer that ends early fails the copy; and a copy whose
// request is cancelled while the held read waits for data ends.
func TestCopyHeldRange(t *testing.T) {
	st, dir := newStore(t)
	data := make([]byte, 9<<20+17) // three chunks, the last short
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "src"), data, 0o644)
	for _, tc := range []struct {
		name      string
		window    int64
		streams   int
		short     int64
		stallAt   int64
		cancel    bool
		wantReads int32
		wantErr   error
	}{
		{name: "window covers the file", window: 64 << 20, streams: 1, wantReads: 1},
		{name: "two windows", window: 8 << 20, streams: 1, wantReads: 2},
		{name: "no window", streams: 1, wantReads: 3},
		{name: "window, three streams", window: 64 << 20, streams: 3, wantReads: 3},
		{name: "answer ends early", window: 64 << 20, streams: 1, short: 100, wantErr: io.ErrUnexpectedEOF},
		{name: "cancelled while held", window: 64 << 20, streams: 1, stallAt: 5 << 20, cancel: true, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src, err := tpc.LocalSource(ctx, st, "/store/src")
			if err != nil {
				t.Fatal(err)
			}
			var reads atomic.Int32
			src.File = countedRanges{File: src.File, reads: &reads, short: tc.short, stallAt: tc.stallAt}
			src.Window = tc.window
			sink, _, err := tpc.LocalSink(ctx, st, "/store/out/"+tc.name, tpc.SinkOptions{MkParents: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cancel {
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			job := &tpc.Job{Src: src, Dst: sink, Streams: tc.streams, Buffers: tpc.NewBudget(64 << 20)}
			ran := make(chan error, 1)
			go func() { ran <- job.Run(ctx) }()
			select {
			case err = <-ran:
			case <-time.After(30 * time.Second):
				t.Fatal("the copy did not end")
			}
			if !checkCopy(t, err, tc.wantErr, filepath.Join(dir, "out", tc.name), data) {
				return
			}
			if n := reads.Load(); n != tc.wantReads {
				t.Errorf("%d ranged reads, want %d", n, tc.wantReads)
			}
		})
	}
}
