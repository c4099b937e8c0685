package tpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/units"
)

// ErrBuffersFull is wrapped by the error of a copy refused because the
// box's copy buffer memory ([tpc] buffer_memory) stayed in use by other
// copies; it also wraps store.ErrBusy.
var ErrBuffersFull = errors.New("copy buffer memory in use by other copies")

// maxWaiting bounds the copies waiting for buffer memory at once; more
// are refused at once. A waiting copy holds its connections and its
// temporary, so the queue must not grow without end.
const maxWaiting = 256

// maxQueueWait is how long a copy waits for buffer memory before it is
// refused: as long as a stalled chunk may hold the memory it waits for
// (chunkTimeout), so a copy queued behind a stalled one still runs.
const maxQueueWait = chunkTimeout

// staleChunk is how long a chunk may hold its buffer while other copies
// wait for memory: a source (or destination) slower than 4 MiB in 30 s
// then fails its copy, so that a trickling server cannot keep memory
// from everyone else for the whole chunkTimeout.
const staleChunk = 30 * time.Second

// ErrTooSlow is wrapped by the error of a copy cut off because a chunk
// took longer than staleChunk while other copies waited for memory.
var ErrTooSlow = errors.New("too slow while other copies wait for buffer memory")

// Default budget bounds, for BufferMemoryFor.
const (
	minDefaultBudget = 64 << 20
	maxDefaultBudget = 1 << 30
)

// BufferMemoryFor is the default budget of a machine with total bytes of
// memory (0: unknown): a sixteenth of it, between 64 MiB and 1 GiB.
func BufferMemoryFor(total int64) int64 {
	if total <= 0 {
		return 4 * minDefaultBudget
	}
	return min(max(total/16, minDefaultBudget), maxDefaultBudget)
}

// MinBudget is the smallest budget: one chunk, so one copy can always
// move.
const MinBudget = chunk

// Budget bounds the memory the copies of one box hold in buffers at
// once, whichever frontend runs them: the box builds one and hands it to
// all. Each copy holds one buffer for its whole run (its seat); copies
// wait for seats within a bounded queue and time, the copy of the client
// holding the fewest seats first, so one client's many copies do not
// starve another's. A copy's other streams take spare memory a chunk at
// a time, only while no copy waits and a quarter of the budget stays
// free, so memory goes to new copies before it goes to more streams.
// While copies wait, a chunk that holds its buffer longer than
// staleChunk is cut off (its copy fails), so a trickling server cannot
// keep memory from everyone else. Safe for concurrent use.
type Budget struct {
	limit int64
	wait  time.Duration // how long a copy waits for a seat
	stale time.Duration // how long a chunk may take while copies wait

	mu      sync.Mutex
	used    int64
	queue   []*seatWaiter  // in arrival order; grantLocked picks among them
	seats   map[string]int // seats held, by client address
	moving  map[*chunkRun]struct{}
	refused uint64
	cut     uint64
	idle    idleMemory
}

// chunkRun is a chunk being moved, which cutStale may end.
type chunkRun struct {
	start  time.Time
	cancel context.CancelCauseFunc
}

type seatWaiter struct {
	n      int64
	client string
	ready  chan struct{} // closed when the seat was granted
}

// NewBudget returns a budget of limit bytes (at least MinBudget).
func NewBudget(limit int64) *Budget {
	return &Budget{limit: max(limit, MinBudget), wait: maxQueueWait, stale: staleChunk}
}

// BudgetStats is a snapshot of a Budget, for metrics.
type BudgetStats struct {
	Limit   int64  // bytes the budget allows
	InUse   int64  // bytes held by copies now
	Waiting int    // copies waiting for a seat
	Refused uint64 // copies refused for want of memory so far
	Cut     uint64 // chunks cut off (each failing its copy) as too slow while others waited
}

// Stats returns a snapshot.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetStats{Limit: b.limit, InUse: b.used, Waiting: len(b.queue), Refused: b.refused, Cut: b.cut}
}

// seat waits for n bytes (at most a chunk) for the copy of the client
// in ctx's store.Request, as long as ctx and the queue wait allow.
func (b *Budget) seat(ctx context.Context, n int64) (*buffer, error) {
	client := store.RequestFrom(ctx).Client
	b.mu.Lock()
	if len(b.queue) == 0 && b.used+n <= b.limit {
		b.takeSeatLocked(n, client)
		b.mu.Unlock()
		return b.seatBuffer(n, client), nil
	}
	if len(b.queue) >= maxWaiting {
		b.refused++
		b.mu.Unlock()
		return nil, b.full(fmt.Sprintf("%d more copies wait already", maxWaiting))
	}
	w := &seatWaiter{n: n, client: client, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	t := time.NewTimer(b.wait)
	defer t.Stop()
	// While it waits, the copy has the chunks that hold memory too long
	// cut off: only waiters care, so only they look.
	tick := time.NewTicker(min(time.Second, b.stale/2))
	defer tick.Stop()
	for {
		select {
		case <-w.ready:
			return b.seatBuffer(n, client), nil
		case <-tick.C:
			b.cutStale(time.Now())
			continue
		case <-t.C:
			if b.leave(w) {
				b.mu.Lock()
				b.refused++
				b.mu.Unlock()
				return nil, b.full(fmt.Sprintf("waited %v", b.wait))
			}
		case <-ctx.Done():
			if b.leave(w) {
				return nil, ctx.Err()
			}
		}
		// Granted while giving up: the seat is ours.
		return b.seatBuffer(n, client), nil
	}
}

func (b *Budget) takeSeatLocked(n int64, client string) {
	b.used += n
	if b.seats == nil {
		b.seats = map[string]int{}
	}
	b.seats[client]++
}

// track registers a chunk being moved with cancel, until the returned
// func is called.
func (b *Budget) track(cancel context.CancelCauseFunc) (untrack func()) {
	r := &chunkRun{start: time.Now(), cancel: cancel}
	b.mu.Lock()
	if b.moving == nil {
		b.moving = map[*chunkRun]struct{}{}
	}
	b.moving[r] = struct{}{}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.moving, r)
		b.mu.Unlock()
	}
}

// cutStale ends the chunks that have held their buffer longer than
// staleChunk, while copies wait.
func (b *Budget) cutStale(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		return
	}
	for r := range b.moving {
		if now.Sub(r.start) > b.stale {
			r.cancel(fmt.Errorf("%w: a chunk took over %v while %d copies waited for the %s of [tpc] buffer_memory",
				ErrTooSlow, b.stale, len(b.queue), units.FormatSize(b.limit)))
			delete(b.moving, r)
			b.cut++
		}
	}
}

// leave takes w out of the queue, reporting false when it was granted
// meanwhile (its memory is then held and must be used or released).
func (b *Budget) leave(w *seatWaiter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, q := range b.queue {
		if q == w {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			b.grantLocked() // the next in line may fit now
			return true
		}
	}
	return false
}

// spare returns n bytes if they are free without making anyone wait and
// leave a quarter of the budget free, else nil.
func (b *Budget) spare(n int64) *buffer {
	b.mu.Lock()
	if len(b.queue) > 0 || b.used+n > b.limit-b.limit/4 {
		b.mu.Unlock()
		return nil
	}
	b.used += n
	b.mu.Unlock()
	return b.buffer(n)
}

func (b *Budget) full(why string) error {
	return fmt.Errorf("%w: %w: all %s of [tpc] buffer_memory are held by running copies (%s); try again later, or raise [tpc] buffer_memory",
		store.ErrBusy, ErrBuffersFull, units.FormatSize(b.limit), why)
}

// grantLocked grants waiting seats while the next fits: the next is the
// earliest waiter of the client holding the fewest seats.
func (b *Budget) grantLocked() {
	for len(b.queue) > 0 {
		i := 0
		for j, w := range b.queue {
			if b.seats[w.client] < b.seats[b.queue[i].client] {
				i = j
			}
		}
		w := b.queue[i]
		if b.used+w.n > b.limit {
			return
		}
		b.queue = append(b.queue[:i], b.queue[i+1:]...)
		b.takeSeatLocked(w.n, w.client)
		close(w.ready)
	}
}
