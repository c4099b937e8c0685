package tpc_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/dio"
	"sitebox/internal/tpc"
)

// resident is the fraction of path's pages in the page cache.
func resident(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := dio.Resident(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A copy to a local disk writes its data past the page cache, all but
// the last piece (not a whole number of blocks), from an https-like
// source (ranges streamed) and from a local one (read piece by piece);
// the landed file is the source, byte for byte.
func TestCopyWritesPastPageCache(t *testing.T) {
	ctx := context.Background()
	st, dir := newStore(t)
	if !dio.WritesDirect(dir) {
		t.Skip("the test directory is not on a local disk with O_DIRECT")
	}
	data := make([]byte, 9<<20+17)
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "src"), data, 0o644)
	for _, ranged := range []bool{true, false} {
		name := map[bool]string{true: "ranged", false: "local"}[ranged]
		t.Run(name, func(t *testing.T) {
			src, err := tpc.LocalSource(ctx, st, "/store/src")
			if err != nil {
				t.Fatal(err)
			}
			if ranged {
				src.File = rangeFile{File: src.File}
			}
			sink, _, err := tpc.LocalSink(ctx, st, "/store/"+name, tpc.SinkOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			job := &tpc.Job{Src: src, Dst: sink, Streams: 2, Buffers: tpc.NewBudget(64 << 20)}
			if err := job.Run(ctx); err != nil {
				t.Fatal(err)
			}
			landed := filepath.Join(dir, name)
			if got := job.DirectBytes(); got < int64(len(data))-128<<10 {
				t.Errorf("%d of %d bytes written past the page cache", got, len(data))
			}
			if r := resident(t, landed); r > 0.1 {
				t.Errorf("%.0f%% of the landed file is in the page cache", 100*r)
			}
			if got, err := os.ReadFile(landed); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("landed file: %v; equal %v", err, bytes.Equal(got, data))
			}
		})
	}
}
