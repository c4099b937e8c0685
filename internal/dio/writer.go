package dio

import (
	"os"
	"sync/atomic"
)

// Writer writes a file's aligned pieces past the page cache (O_DIRECT)
// through a second descriptor of the file, for writers that land large
// files on the box's disks: third-party copies and uploads. Written
// through the page cache, every byte costs the kernel a copy into a
// page-cache page (and, on a machine whose free memory has gone cold, a
// fault for each new page) and the flusher a second write later; a file
// just written is seldom read again at once.
//
// WriteAt reports whether it wrote; the caller writes what it did not
// through its own descriptor. A failed write (the disk full, an I/O
// error) turns the Writer off, so the caller's own write of the same
// piece decides the outcome and the rest goes through the page cache.
// A nil *Writer writes nothing.
type Writer struct {
	f atomic.Pointer[os.File]
	n atomic.Int64
}

// NewWriter opens the file behind fd again with O_DIRECT, if it is on a
// local disk (OnLocalDisk) whose filesystem takes it; nil otherwise.
func NewWriter(fd uintptr) *Writer {
	if !OnLocalDisk(fd) {
		return nil
	}
	f, err := Reopen(fd)
	if err != nil {
		return nil
	}
	w := &Writer{}
	w.f.Store(f)
	return w
}

// WriteAt writes p at off past the page cache and reports whether it
// did: not when p or off is not aligned (Aligned), nor once a write
// failed.
func (w *Writer) WriteAt(p []byte, off int64) bool {
	if w == nil || !Aligned(p, off) {
		return false
	}
	f := w.f.Load()
	if f == nil {
		return false
	}
	if _, err := f.WriteAt(p, off); err != nil {
		w.Close()
		return false
	}
	w.n.Add(int64(len(p)))
	return true
}

// On reports whether writes may go past the page cache now.
func (w *Writer) On() bool { return w != nil && w.f.Load() != nil }

// Bytes is how many bytes were written past the page cache.
func (w *Writer) Bytes() int64 {
	if w == nil {
		return 0
	}
	return w.n.Load()
}

// Close closes the second descriptor; writes after it report false. A
// write still under way on it ends first (os.File).
func (w *Writer) Close() {
	if w == nil {
		return
	}
	if f := w.f.Swap(nil); f != nil {
		f.Close()
	}
}

// WritesDirect reports whether files created in dir would be written
// past the page cache (NewWriter), by creating and removing one.
func WritesDirect(dir string) bool {
	f, err := os.CreateTemp(dir, ".dio-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := NewWriter(f.Fd())
	w.Close()
	return w != nil
}
