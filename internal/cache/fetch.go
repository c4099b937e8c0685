package cache

import (
	"container/list"
	"sync/atomic"
)

// fetch is a run of pages of one block coming from upstream. Readers
// that want them while in flight wait on done and copy from buf; the disk
// writer holds a reference too, and the buffer returns to the RAM budget
// when the last reference goes.
type fetch struct {
	p0  int   // first page
	off int64 // file offset of buf[0]
	gen uint64
	// ahead says read-ahead or prefetch started it, not a reader's miss
	// (set before it is launched).
	ahead bool
	buf   []byte
	done  chan struct{}
	err   error
	refs  atomic.Int32
	// subs are the CRC32Cs of buf's 4 KiB pieces (blockmap.SubPage), set
	// before done is closed: the writer combines them into the map's page
	// CRCs, and a reader wanting CRCs served from buf gets them.
	subs []uint32
	// readTo is how far readers have read buf; kept and keptAt say it is
	// kept in RAM after its write (keep.go; keptAt guarded by keeper.mu).
	readTo atomic.Int64
	kept   atomic.Bool
	keptAt *list.Element
}

// unref drops a reference; the last gives the buffer back to the RAM
// budget.
func (f *fetch) unref(c *Cache) {
	if f.refs.Add(-1) == 0 {
		c.budget.put(f.buf)
	}
}

// finished says the fetch is over, its bytes (or its error) in.
func (f *fetch) finished() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// end is the file offset just past buf.
func (f *fetch) end() int64 { return f.off + int64(len(f.buf)) }

// pagesOf is the number of pages f covers.
func (f *fetch) pagesOf(page int64) int { return int((int64(len(f.buf)) + page - 1) / page) }
