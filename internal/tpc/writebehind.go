package tpc

import (
	"sync/atomic"

	"sitebox/internal/store"
)

// A local destination is written into the page cache, and the disk
// writes of a new file wait, by default, until the kernel's flusher gets
// round to them (here: after 30 s, or once a tenth of the RAM is dirty).
// The copy lands by renaming its temporary over the old file, and ext4
// (auto_da_alloc, its default) first pushes all of the new file's
// delayed-allocation data to the disk on a rename over an existing file,
// so the rename — and the client waiting for the copy — took as long as
// writing the whole file (1.2 to 2.2 s per GiB on the reference
// machine). The copy therefore starts the disk writes of each chunk as
// soon as it is written (sync_file_range with SYNC_FILE_RANGE_WRITE,
// which starts them and waits for none): by the landing most of the file
// is written or on its way, and the rename has little left to push.
//
// Crash-safety is unchanged: nothing under the final name changes before
// the rename, and the rename still pushes whatever is left of the file
// first, so after a crash the final name holds the old file or the
// whole new one (as far as ext4's auto_da_alloc promises it, which is
// what the landing relied on before). Starting writes early only moves
// the same disk writes forward; it forces nothing to the disk that would
// not be written anyway. The streams never wait for the disk: a worker
// starts the writes, and a chunk it has no room for is left to the
// landing's rename. Only when the data has all moved does the job wait
// for the worker to start what it was handed, which the rename would
// otherwise push itself.

// writeBehindQueue is how many written chunks may wait for the worker;
// when it is full a chunk's writes are left to the landing.
const writeBehindQueue = 64

// writeBehind starts the disk writes of the destination's chunks as they
// are written, in a worker of its own.
type writeBehind struct {
	start  func(off, n int64) error // starts writing [off, off+n) to the disk
	ranges chan [2]int64
	done   chan struct{}
	skip   atomic.Bool // the copy failed: what is left is not started
}

// startWriteBehind starts the worker for a destination backed by a
// file descriptor on a system that can start a range's writes; nil
// otherwise (a remote upload, another system).
func startWriteBehind(f store.WritableFile) *writeBehind {
	sf, ok := store.As[store.SendFiler](f)
	if !ok {
		return nil
	}
	start := rangeWriter(sf.Fd())
	if start == nil {
		return nil
	}
	return runWriteBehind(start)
}

// runWriteBehind starts a worker calling start for each written range.
func runWriteBehind(start func(off, n int64) error) *writeBehind {
	w := &writeBehind{start: start, ranges: make(chan [2]int64, writeBehindQueue), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *writeBehind) run() {
	defer close(w.done)
	failed := false
	for r := range w.ranges {
		// After a failure (a file system that refuses) the rest is
		// left to the landing, as without write-behind.
		if !failed && !w.skip.Load() && w.start(r[0], r[1]) != nil {
			failed = true
		}
	}
}

// wrote hands the n bytes written at off to the worker; it never waits.
func (w *writeBehind) wrote(off, n int64) {
	if w == nil || n <= 0 {
		return
	}
	select {
	case w.ranges <- [2]int64{off, n}:
	default: // the worker is behind: the landing pushes this range
	}
}

// stop ends the worker and waits for it, after it started the writes of
// what it was handed if the copy succeeded (the landing would push them
// anyway), or at once if it failed; the file must stay open until then.
func (w *writeBehind) stop(copied bool) {
	if w != nil {
		w.skip.Store(!copied)
		close(w.ranges)
		<-w.done
	}
}
