package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/store"
)

// maxGroupBytes bounds one upstream request of a group of fetches: about
// what one connection carries in a round trip on a 10 ms × 150 MB/s
// link, so a large miss spreads over several streams while a readv's
// scattered misses still go in one request or a few.
const maxGroupBytes = 2 << 20

// minGroupBytes is the smallest group launch makes of a larger miss: a
// readv's 1.5 MiB of scattered pages goes as four requests of 384 KiB
// over four streams, answered in parallel (4× less time on the wire than
// one request), still in one round trip. Below it, the cost of one more
// upstream request outweighs the transfer time saved.
const minGroupBytes = 256 << 10

// groupSpread is how many streams a miss is spread over at most (while
// its groups stay at least minGroupBytes).
const groupSpread = 4

// groupSlack is how many more requests in flight a stream holding the
// file may have than the least busy stream before a group goes to a
// stream that must open the file first (see streamCost).
const groupSlack = 4

// preopenStreams is how many streams a file is opened on once a reader
// misses: the groups of a few readers' concurrent vector reads
// (groupSpread each) then find the file open on a stream not busy with
// another group.
const preopenStreams = 2 * groupSpread

// preopenFirst is how many of them open as a client opens the file: its
// first miss then finds one open (a group may queue there, see
// groupSlack), and a reader whose reads all hit (an analysis job reading
// again what it read before) costs the upstream one open, not eight.
const preopenFirst = 1

// readVer is an upstream file that reads scattered ranges in one request
// (root:// upstreams: kXR_readv).
type readVer interface {
	ReadV(ctx context.Context, bufs [][]byte, offs []int64) error
}

// launch starts the fetches a read (or read-ahead, or a readv's hint)
// created (runs of pages: a scattered reader's misses are a page or two
// each), in groups of up to maxGroupBytes, each group one upstream
// request where the upstream can read scattered ranges at once. Groups
// run in parallel.
func (e *entry) launch(fs []*fetch) {
	if len(fs) == 0 {
		return
	}
	e.c.preopen(e, preopenStreams)
	slices.SortFunc(fs, func(a, b *fetch) int { return a.p0 - b.p0 })
	total := 0
	for _, f := range fs {
		total += len(f.buf)
	}
	limit := min(max(total/groupSpread, minGroupBytes), maxGroupBytes)
	for len(fs) > 0 {
		n, bytes := 0, 0
		for n < len(fs) && (n == 0 || bytes+len(fs[n].buf) <= limit) {
			bytes += len(fs[n].buf)
			n++
		}
		go e.runGroup(fs[:n:n])
		fs = fs[n:]
	}
}

func (e *entry) runGroup(fs []*fetch) {
	c := e.c
	var err error
	if len(fs) == 1 {
		err = c.readUpstream(e, fs[0].buf, fs[0].off)
	} else {
		bufs, offs := make([][]byte, len(fs)), make([]int64, len(fs))
		for i, f := range fs {
			bufs[i], offs[i] = f.buf, f.off
		}
		err = c.readUpstreamMany(e, bufs, offs)
	}
	for _, f := range fs {
		f.err = err
		e.fetched(f)
	}
}

// readUpstreamMany is readUpstream for several ranges: each upstream in
// order, each twice, all ranges or an error.
func (c *Cache) readUpstreamMany(e *entry, bufs [][]byte, offs []int64) error {
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	closed, err := c.failover(e, total, func(ui int, u *upstream) error { return c.readOnceMany(e, ui, u, bufs, offs) })
	if err != nil && !closed {
		return &store.PathError{Op: "read", Path: e.path, Err: fmt.Errorf("%w (%w): no upstream could serve %d ranges from byte %d: %w", store.ErrIO, store.ErrUnavailable, len(bufs), offs[0], err)}
	}
	return err
}

// readOnceMany reads the ranges from upstream ui: one readv where the
// upstream file has it, else a read per range, in parallel.
func (c *Cache) readOnceMany(e *entry, ui int, u *upstream, bufs [][]byte, offs []int64) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.FetchTimeout)
	defer cancel()
	// A group (a few hundred KiB) waits about a millisecond per request
	// ahead of it on a stream, far less than the round trip of opening
	// the file on another: it queues behind up to groupSlack of them.
	si := u.take(e.streamCost(ui, u, groupSlack))
	f, err := c.upFile(ctx, e, ui, u, si)
	if err == nil {
		if rv, ok := f.(readVer); ok {
			err = rv.ReadV(ctx, bufs, offs)
		} else {
			err = errors.ErrUnsupported
		}
	}
	u.done(si)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errors.ErrUnsupported):
		// An https upstream: the ranges go as parallel reads over the
		// client's connection pool.
		var g errgroup.Group
		for i := range bufs {
			g.Go(func() error { return c.readOnce(e, ui, u, bufs[i], offs[i]) })
		}
		return g.Wait()
	}
	e.up.dropUpstream(ui) // as readOnce: the retry re-opens
	return err
}

// preopen opens e's file at its first upstream, in the background, until
// want streams hold it: one as the file is opened, and the rest of the
// streams a scattered reader's misses spread over (see launch) at its
// first miss. An upstream open costs a round trip, as much as the read it
// precedes, and a reader's vector reads would each wait for one. Only for
// files large enough for their misses to spread, and not complete.
func (c *Cache) preopen(e *entry, want int) {
	e.mu.Lock()
	skip := e.m == nil || e.m.Complete() || e.m.Size() < 2*groupSpread*minGroupBytes
	e.mu.Unlock()
	if skip || len(e.route.ups) == 0 {
		return
	}
	have := e.up.count()
	if have >= want {
		return
	}
	u := e.route.ups[0]
	c.wantConnected(u)
	for range min(want-have, len(u.Streams)-have) {
		si := u.take(e.openCost(u))
		c.acquire(e)
		go func() {
			defer c.release(e)
			defer u.done(si)
			ctx, cancel := context.WithTimeout(c.ctx, c.cfg.FetchTimeout)
			defer cancel()
			c.upFile(ctx, e, 0, u, si) // an error shows again on the first read
		}()
	}
}

// count is the number of handles open or opening.
func (h *upFiles) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.handles)
}
