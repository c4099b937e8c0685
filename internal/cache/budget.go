package cache

import (
	"sync"
	"sync/atomic"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/dio"
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
	return dio.Buf(size)[:n]
}

func (b *budget) put(buf []byte) {
	size := int64(cap(buf))
	buf = buf[:cap(buf)]
	b.pools[size/b.unit-1].Put(&buf)
	b.used.Add(-size)
}

func (b *budget) inUse() int64 { return b.used.Load() }
