package tpc

import (
	"runtime/debug"
	"time"

	"sitebox/internal/dio"
)

// giveBackAfter is the peak of buffer memory above which the budget,
// once no copy runs, hands the memory back to the system at once rather
// than when the runtime gets round to it (minutes later: the collector
// runs on allocation, or every two minutes when idle, and returns freed
// pages gradually). giveBackEvery bounds how often that forced
// collection runs.
const (
	giveBackAfter = 16 << 20
	giveBackEvery = 10 * time.Second
)

// buffer is memory held against a Budget until release.
type buffer struct {
	b *Budget
	p []byte
	// seat: the buffer is client's seat, not spare memory.
	seat   bool
	client string
}

// idleMemory keeps released chunk buffers for the next copies, so that
// moving data does not churn the heap: never more bytes than copies use
// now, so memory kept idle is at most what is in use, and none once no
// copy runs. Guarded by Budget.mu.
type idleMemory struct {
	chunks   [][]byte
	peak     int64     // the most bytes in use since memory was given back
	lastBack time.Time // when memory was last given back
}

// seatBuffer is buffer for the seat of client.
func (b *Budget) seatBuffer(n int64, client string) *buffer {
	buf := b.buffer(n)
	buf.client, buf.seat = client, true
	return buf
}

// buffer makes the n bytes already counted as used into a buffer: a
// kept chunk when n is one, else new memory of exactly n bytes (the one
// buffer of a file smaller than a chunk is made to measure).
func (b *Budget) buffer(n int64) *buffer {
	b.mu.Lock()
	b.idle.peak = max(b.idle.peak, b.used)
	var p []byte
	if k := len(b.idle.chunks); n == chunk && k > 0 {
		p, b.idle.chunks[k-1] = b.idle.chunks[k-1], nil
		b.idle.chunks = b.idle.chunks[:k-1]
	}
	b.mu.Unlock()
	if p == nil {
		p = dio.Buf(n) // aligned, for a local destination's direct writes
	}
	return &buffer{b: b, p: p}
}

// release gives the memory back; the buffer must not be used after.
func (buf *buffer) release() {
	b, p := buf.b, buf.p
	buf.p = nil
	b.mu.Lock()
	b.used -= int64(len(p))
	if buf.seat {
		if b.seats[buf.client]--; b.seats[buf.client] <= 0 {
			delete(b.seats, buf.client)
		}
	}
	if len(p) == chunk && int64(len(b.idle.chunks)+1)*chunk <= b.used {
		b.idle.chunks = append(b.idle.chunks, p)
	}
	for int64(len(b.idle.chunks))*chunk > b.used {
		last := len(b.idle.chunks) - 1
		b.idle.chunks[last] = nil
		b.idle.chunks = b.idle.chunks[:last]
	}
	b.grantLocked()
	giveBack := b.used == 0 && len(b.queue) == 0 && b.idle.peak >= giveBackAfter && time.Since(b.idle.lastBack) >= giveBackEvery
	if giveBack {
		b.idle.peak, b.idle.lastBack = 0, time.Now()
	}
	b.mu.Unlock()
	if giveBack {
		debug.FreeOSMemory()
	}
}
