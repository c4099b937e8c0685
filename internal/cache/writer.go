package cache

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/disk"
)

// budget hands out fetch buffers up to the RAM limit. It never blocks: a
// caller that gets nil reads uncached instead of waiting for memory.
// Buffers come in multiples of a unit (a page) up to a block, each size
// from its own pool, so a page-sized fetch holds a page of RAM, not a
// block.
type budget struct {
	limit, unit int64
	used        atomic.Int64
	pools       []sync.Pool // pools[k-1] holds buffers of k units
}

func newBudget(ram, blockSize int64) *budget {
	unit := min(int64(blockmap.CheckPage), blockSize)
	return &budget{limit: ram, unit: unit, pools: make([]sync.Pool, blockSize/unit)}
}

// get returns a buffer of n bytes (at most a block), aligned for
// O_DIRECT and with room to pad n to dioAlign, or nil when RAM is short.
func (b *budget) get(n int64) []byte {
	k := max((n+b.unit-1)/b.unit, 1)
	size := k * b.unit
	for {
		used := b.used.Load()
		if used+size > b.limit {
			return nil
		}
		if b.used.CompareAndSwap(used, used+size) {
			break
		}
	}
	if v, ok := b.pools[k-1].Get().(*[]byte); ok {
		return (*v)[:n]
	}
	return disk.AlignedBuf(size)[:n]
}

func (b *budget) put(buf []byte) {
	size := int64(cap(buf))
	buf = buf[:cap(buf)]
	b.pools[size/b.unit-1].Put(&buf)
	b.used.Add(-size)
}

func (b *budget) inUse() int64 { return b.used.Load() }

type writeJob struct {
	e *entry
	f *fetch
}

// writeBehind queues a fetched block for the disk. It reports false when
// the block will not be cached: the disk is failed or the queue is full
// (the disk is slower than the network), so the reader never waits on it.
func (c *Cache) writeBehind(e *entry, f *fetch) bool {
	if !c.disk.Healthy() {
		return false
	}
	select {
	case c.writeQ <- writeJob{e, f}:
		return true
	default:
		c.ctr.writesDropped.Add(1)
		return false
	}
}

// writer drains the write queue.
func (c *Cache) writer() {
	defer c.wg.Done()
	for job := range c.writeQ {
		job.e.writeBlock(job.f)
	}
}

func (e *entry) writeBlock(f *fetch) {
	c := e.c
	e.mu.Lock()
	current := e.gen == f.gen && e.m != nil
	var page int64
	if current {
		page = e.m.PageSize()
	}
	var err error
	var data *os.File
	// buffered: the write goes through the page cache, which then holds
	// the very bytes the CRCs were computed from.
	buffered := !c.disk.Direct()
	switch {
	case !current || !c.disk.Healthy():
		current = false
	case c.disk.Direct() && len(f.buf) < 1<<20:
		// A few pages for a scattered reader: buffered, so its next read
		// of them is a page-cache copy (O_DIRECT pays off for streams).
		data, err = e.readFile()
		buffered = true
	default:
		data, err = e.dataFile()
	}
	e.mu.Unlock()
	if current && err == nil {
		// The last page is padded to O_DIRECT's alignment; the data file
		// is that much longer than the upstream file (see dataFile).
		buf := f.buf[:disk.AlignUp(int64(len(f.buf)))]
		clear(buf[len(f.buf):])
		_, err = data.WriteAt(buf, f.off)
	}
	switch {
	case errors.Is(err, os.ErrClosed): // the copy was dropped while we wrote
		current = false
	case err != nil:
		e.diskFailed(err)
		current = false
	case current:
		c.disk.Succeeded()
		c.ctr.writtenBytes.Add(int64(len(f.buf)))
		c.kickPurge(int64(len(f.buf)))
	}
	var crcs []uint32
	if current {
		crcs = blockmap.PageCRCs(f.buf, f.subs, page)
	}
	e.finishFetch(f, current, buffered, crcs)
}
