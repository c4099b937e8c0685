package cache

import (
	"errors"
	"hash/crc32"
	"os"
	"sync"
)

// budget hands out block buffers up to the RAM limit. It never blocks: a
// caller that gets nil reads uncached instead of waiting for memory.
type budget struct {
	size  int64
	slots chan struct{}
	pool  sync.Pool
}

func newBudget(ram, blockSize int64) *budget {
	b := &budget{size: blockSize, slots: make(chan struct{}, ram/blockSize)}
	b.pool.New = func() any { return alignedBuf(blockSize) }
	return b
}

func (b *budget) get() []byte {
	select {
	case b.slots <- struct{}{}:
		return b.pool.Get().([]byte)
	default:
		return nil
	}
}

func (b *budget) put(buf []byte) {
	b.pool.Put(buf[:cap(buf)])
	<-b.slots
}

func (b *budget) inUse() int64 { return int64(len(b.slots)) * b.size }

type writeJob struct {
	e *entry
	f *fetch
}

// writeBehind queues a fetched block for the disk. It reports false when
// the block will not be cached: the disk is failed or the queue is full
// (the disk is slower than the network), so the reader never waits on it.
func (c *Cache) writeBehind(e *entry, f *fetch) bool {
	if !c.disk.healthy() {
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
		page = e.m.pageSize
	}
	var err error
	data := e.data
	if current && c.disk.healthy() {
		data, err = e.dataFile()
	} else {
		current = false
	}
	e.mu.Unlock()
	if current && err == nil {
		// The last block is padded to O_DIRECT's alignment; the data file
		// is that much longer than the upstream file (see dataFile).
		buf := f.buf[:alignUp(int64(len(f.buf)))]
		clear(buf[len(f.buf):])
		_, err = data.WriteAt(buf, int64(f.b)*c.cfg.BlockSize)
	}
	switch {
	case errors.Is(err, os.ErrClosed): // the copy was dropped while we wrote
		current = false
	case err != nil:
		e.diskFailed(err)
		current = false
	case current:
		c.disk.succeeded()
		c.ctr.writtenBytes.Add(int64(len(f.buf)))
		c.kickPurge(int64(len(f.buf)))
	}
	var crcs []uint32
	if current {
		crcs = pageCRCs(f.buf, page)
	}
	e.finishFetch(f, current, crcs)
}

// pageCRCs are the CRC32Cs of buf's pages of the given size.
func pageCRCs(buf []byte, page int64) []uint32 {
	crcs := make([]uint32, 0, (int64(len(buf))+page-1)/page)
	for off := int64(0); off < int64(len(buf)); off += page {
		crcs = append(crcs, crc32.Checksum(buf[off:min(off+page, int64(len(buf)))], castagnoli))
	}
	return crcs
}
