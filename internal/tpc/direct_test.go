package tpc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/dio"
	"sitebox/internal/store"
)

// osWritable is a store.WritableFile over an *os.File.
type osWritable struct{ *os.File }

func (f osWritable) Stat() (store.FileInfo, error) { return store.FileInfo{}, nil }

// A direct write that fails is written again through the page cache,
// and the copy writes so from then on: the direct path only ever saves
// work, it never fails a copy.
func TestDirectWriteFallsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ro, err := os.Open(path) // writes through it fail (EBADF)
	if err != nil {
		t.Fatal(err)
	}
	j := &Job{Dst: Sink{File: osWritable{f}}, direct: &direct{}}
	j.direct.f.Store(ro)
	p := dio.Buf(2 * dio.Align)
	for i := range p {
		p[i] = byte(i)
	}
	for _, off := range []int64{0, 2 * dio.Align} {
		if err := j.writeAt(p, off); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if j.direct.on() || j.DirectBytes() != 0 {
		t.Errorf("direct writes still on after a failure (%d bytes counted)", j.DirectBytes())
	}
	got, _ := os.ReadFile(path)
	if want := append(bytes.Clone(p), p...); !bytes.Equal(got, want) {
		t.Errorf("file holds %d bytes, not the %d written", len(got), len(want))
	}
	// Pieces that are not aligned never go the direct way.
	d := &direct{}
	d.f.Store(f)
	if d.write(p[1:dio.Align+1], 0) {
		t.Error("a misaligned piece was written directly")
	}
}
