package tpc_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
)

func newStore(t *testing.T) (store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o, dir
}

// cutFile fails every read at or past cut, as a source dying mid-copy.
type cutFile struct {
	store.File
	cut int64
}

func (c cutFile) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > c.cut {
		return 0, io.ErrUnexpectedEOF
	}
	return c.File.ReadAt(p, off)
}

// streamedFile offers its file as a RangeReader whose bodies write
// themselves out (io.WriterTo) in pieces, as a root:// source does; a
// body fails at cut, if set. writes counts the pieces.
type streamedFile struct {
	store.File
	cut    int64
	writes *atomic.Int64
}

func (s streamedFile) ReadRange(_ context.Context, off, n int64) (io.ReadCloser, error) {
	return &writerBody{s: s, pos: off, end: off + n}, nil
}

type writerBody struct {
	s        streamedFile
	pos, end int64
}

func (b *writerBody) Read([]byte) (int, error) { return 0, errors.New("read only through WriteTo") }
func (b *writerBody) Close() error             { return nil }

func (b *writerBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	buf := make([]byte, 100<<10)
	for b.pos < b.end {
		if b.s.cut > 0 && b.pos >= b.s.cut {
			return total, io.ErrUnexpectedEOF
		}
		n, err := b.s.File.ReadAt(buf[:min(int64(len(buf)), b.end-b.pos)], b.pos)
		if n > 0 {
			b.s.writes.Add(1)
			m, werr := w.Write(buf[:n])
			total += int64(m)
			b.pos += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return total, err
		}
	}
	return total, nil
}

// checkCopy checks a copy's outcome: a copy meant to fail with wantErr
// did so and left nothing at landed (then it reports false: nothing more
// to check); any other landed exactly data.
func checkCopy(t *testing.T, err, wantErr error, landed string, data []byte) bool {
	t.Helper()
	got, rerr := os.ReadFile(landed)
	if wantErr != nil {
		if !errors.Is(err, wantErr) || rerr == nil {
			t.Fatalf("copy: %v (want %v), final file there: %v", err, wantErr, rerr == nil)
		}
		return false
	}
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copy: %v; %d bytes, equal %v", err, len(got), bytes.Equal(got, data))
	}
	return true
}

func TestCopy(t *testing.T) {
	ctx := context.Background()
	st, dir := newStore(t)
	data := make([]byte, 9<<20+17)
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "src"), data, 0o644)

	tests := []struct {
		name    string
		streams int
		cut     int64 // 0: no cut
		stream  bool  // the source streams its ranges (streamedFile)
		exists  bool
		over    bool
		wantErr bool
	}{
		{name: "one stream", streams: 1},
		{name: "four streams", streams: 4},
		{name: "more streams than chunks", streams: 64},
		{name: "source cut", streams: 3, cut: 5 << 20, wantErr: true},
		{name: "existing, overwrite", streams: 2, exists: true, over: true},
		{name: "streamed", streams: 3, stream: true},
		{name: "streamed, cut", streams: 2, stream: true, cut: 5<<20 + 3, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := "/store/out/" + tc.name
			if tc.exists {
				os.MkdirAll(filepath.Join(dir, "out"), 0o755)
				os.WriteFile(filepath.Join(dir, "out", tc.name), []byte("old"), 0o644)
			}
			src, err := tpc.LocalSource(ctx, st, "/store/src")
			if err != nil {
				t.Fatal(err)
			}
			var writes atomic.Int64
			switch {
			case tc.stream:
				src.File = streamedFile{src.File, tc.cut, &writes}
			case tc.cut > 0:
				src.File = cutFile{src.File, tc.cut}
			}
			sink, existed, err := tpc.LocalSink(ctx, st, dst, tpc.SinkOptions{Overwrite: tc.over, MkParents: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if existed != tc.exists {
				t.Errorf("existed %v, want %v", existed, tc.exists)
			}
			err = (&tpc.Job{Src: src, Dst: sink, Streams: tc.streams, Buffers: tpc.NewBudget(64 << 20)}).Run(ctx)
			got, rerr := os.ReadFile(filepath.Join(dir, "out", tc.name))
			if tc.wantErr {
				if err == nil {
					t.Fatal("copy of a cut source succeeded")
				}
				if rerr == nil {
					t.Errorf("a failed copy left %d bytes under the final name", len(got))
				}
			} else if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("copy: %v; %d bytes, equal %v", err, len(got), bytes.Equal(got, data))
			}
			if tc.stream && writes.Load() == 0 {
				t.Error("the streamed source was read otherwise")
			}
			entries, _ := os.ReadDir(filepath.Join(dir, "out"))
			for _, e := range entries {
				if e.Name()[0] == '.' {
					t.Errorf("temporary left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestSinkRefusesExistingWithoutOverwrite(t *testing.T) {
	ctx := context.Background()
	st, dir := newStore(t)
	os.WriteFile(filepath.Join(dir, "f"), []byte("keep"), 0o644)
	if _, _, err := tpc.LocalSink(ctx, st, "/store/f", tpc.SinkOptions{}, nil); !errors.Is(err, store.ErrExist) {
		t.Fatalf("err %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "keep" {
		t.Errorf("file changed to %q", b)
	}
}

func TestChecksumMismatchAborts(t *testing.T) {
	ctx := context.Background()
	st, dir := newStore(t)
	os.WriteFile(filepath.Join(dir, "src"), []byte("hello"), 0o644)
	src, _ := tpc.LocalSource(ctx, st, "/store/src")
	src.Checksum = func(context.Context) (string, error) { return "deadbeef", nil }
	sink, _, err := tpc.LocalSink(ctx, st, "/store/dst", tpc.SinkOptions{Overwrite: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&tpc.Job{Src: src, Dst: sink, Buffers: tpc.NewBudget(64 << 20)}).Run(ctx); !errors.Is(err, tpc.ErrChecksum) {
		t.Fatalf("err %v, want ErrChecksum", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dst")); err == nil {
		t.Error("a copy with a bad checksum was kept")
	}
}

// A copy's destination holds the file's writer lock from the sink's
// creation until Commit or Abort: other writers are refused meanwhile,
// and a copy onto a file being written is refused before anything moves.
func TestSinkHoldsWriterLock(t *testing.T) {
	st, dir := newStore(t)
	ctx := context.Background()
	sink, _, err := tpc.LocalSink(ctx, st, "/store/dst", tpc.SinkOptions{Overwrite: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.LockWriter(st, "/store/dst", "another writer"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("writer during a copy: %v, want ErrLocked", err)
	}
	if _, _, err := tpc.LocalSink(ctx, st, "/store/dst", tpc.SinkOptions{Overwrite: true}, nil); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second copy onto the same name: %v, want ErrLocked", err)
	}
	sink.File.WriteAt([]byte("x"), 0)
	sink.File.Close()
	if err := sink.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	unlock, err := store.LockWriter(st, "/store/dst", "another writer")
	if err != nil {
		t.Fatalf("after the commit: %v", err)
	}
	if _, _, err := tpc.LocalSink(ctx, st, "/store/dst", tpc.SinkOptions{Overwrite: true}, nil); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("copy onto a file being written: %v, want ErrLocked", err)
	}
	unlock()
	sink, _, err = tpc.LocalSink(ctx, st, "/store/dst", tpc.SinkOptions{Overwrite: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink.Abort(ctx)
	if _, err := store.LockWriter(st, "/store/dst", "another writer"); err != nil {
		t.Fatalf("after an abort: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "dst")); string(b) != "x" {
		t.Fatalf("dst = %q", b)
	}
}

// rangeFile streams ranges of a file as a remote one does; short cuts
// its answer for the range at that offset.
type rangeFile struct {
	store.File
	short int64
}

func (r rangeFile) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	if r.short > 0 && off == r.short {
		n /= 2
	}
	return io.NopCloser(io.NewSectionReader(r.File, off, n)), nil
}

// TestCopyStreamed: a source that streams ranges is copied piece by
// piece, summed as written (so a checksum mismatch is still caught),
// and one that ends a range early fails the copy.
func TestCopyStreamed(t *testing.T) {
	ctx := context.Background()
	st, dir := newStore(t)
	data := make([]byte, 9<<20+17)
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "src"), data, 0o644)
	for _, tc := range []struct {
		name    string
		short   int64
		badSum  bool
		wantErr error
	}{
		{name: "whole"},
		{name: "short range", short: 4 << 20, wantErr: io.ErrUnexpectedEOF},
		{name: "bad checksum", badSum: true, wantErr: tpc.ErrChecksum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := tpc.LocalSource(ctx, st, "/store/src")
			if err != nil {
				t.Fatal(err)
			}
			src.File = rangeFile{File: src.File, short: tc.short}
			if tc.badSum {
				src.Checksum = func(context.Context) (string, error) { return "deadbeef", nil }
			}
			sink, _, err := tpc.LocalSink(ctx, st, "/store/out/"+tc.name, tpc.SinkOptions{MkParents: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = (&tpc.Job{Src: src, Dst: sink, Streams: 3, Buffers: tpc.NewBudget(64 << 20)}).Run(ctx)
			if !checkCopy(t, err, tc.wantErr, filepath.Join(dir, "out", tc.name), data) {
				return
			}
		})
	}
}

// TestCopyLocalShrunk: a local source, copied piece by piece, that is
// cut short while the copy runs fails it with the offset where the data
// ended, and leaves nothing under the final name.
func TestCopyLocalShrunk(t *testing.T) {
	ctx := context.Background()
	st, dir := newStore(t)
	data := make([]byte, 9<<20+17)
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "src"), data, 0o644)
	src, err := tpc.LocalSource(ctx, st, "/store/src")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := store.As[store.SendFiler](src.File); !ok {
		t.Fatal("the local source has no descriptor: this test would not read it piece by piece")
	}
	if err := os.Truncate(filepath.Join(dir, "src"), 5<<20+100); err != nil {
		t.Fatal(err)
	}
	sink, _, err := tpc.LocalSink(ctx, st, "/store/out", tpc.SinkOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = (&tpc.Job{Src: src, Dst: sink, Streams: 1, Buffers: tpc.NewBudget(64 << 20)}).Run(ctx)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), fmt.Sprint("at ", 5<<20+100)) {
		t.Fatalf("copy of a shrunk source: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Fatalf("a failed copy left the final file: %v", err)
	}
}
