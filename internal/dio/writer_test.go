package dio

import (
	"os"
	"path/filepath"
	"testing"
)

// A Writer whose write fails says so and writes nothing more, so the
// caller writes that piece, and the rest, its own way; misaligned pieces
// never go its way; a nil Writer writes nothing.
func TestWriterTurnsOffAfterFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(path) // writes through it fail (EBADF)
	if err != nil {
		t.Fatal(err)
	}
	w := &Writer{}
	w.f.Store(ro)
	p := Buf(2 * Align)
	if !w.On() || w.WriteAt(p, 0) {
		t.Fatal("a failed write reported as done")
	}
	if w.On() || w.WriteAt(p, 0) || w.Bytes() != 0 {
		t.Errorf("still on after a failure (%d bytes counted)", w.Bytes())
	}
	var none *Writer
	if none.On() || none.WriteAt(p, 0) || none.Bytes() != 0 {
		t.Error("a nil Writer wrote")
	}
	none.Close()

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w = NewWriter(f.Fd())
	if w == nil {
		t.Skip("the test directory is not on a local disk with O_DIRECT")
	}
	defer w.Close()
	if w.WriteAt(p[1:Align+1], 0) || w.WriteAt(p[:Align], 512) {
		t.Error("a misaligned piece was written directly")
	}
	if !w.WriteAt(p, Align) || w.Bytes() != int64(len(p)) {
		t.Errorf("an aligned piece was not written directly (%d bytes counted)", w.Bytes())
	}
}
