package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/store"
)

// route is a cached prefix and its upstreams in failover order.
type route struct {
	prefix string
	ups    []*upstream
}

type upstream struct {
	Upstream
	mu   sync.Mutex
	busy []int // fetches in flight per stream
	next int   // where the search for the least busy stream starts

	open   atomic.Int64 // upstream files open, over all streams
	warned atomic.Int64 // when the cap was last reported (unix ns)

	connecting  atomic.Bool  // the connector has it queued or dialing
	connectedAt atomic.Int64 // when the connector last dialed its streams (unix ns)
}

// newRoutes builds the route table: the longest prefix wins, so
// /store/user is served by its own upstreams rather than those of /store.
func newRoutes(cfg []Route) *store.PrefixTable[*route] {
	rs := &store.PrefixTable[*route]{}
	for _, r := range cfg {
		nr := &route{prefix: r.Prefix}
		for _, u := range r.Upstreams {
			nr.ups = append(nr.ups, &upstream{Upstream: u, busy: make([]int, len(u.Streams))})
		}
		rs.Add(nr.prefix, nr)
	}
	return rs
}

// upCtx is ctx for a call to upstream u, carrying the request the cache
// makes there when u takes CGI (root://): the client's VO (a director
// there picks the VO's federation by it) and a mark that a cache is
// asking, so a director never sends the request back to a cache — its
// own, or another — round a loop.
func upCtx(ctx context.Context, u *upstream, vo string) context.Context {
	if !u.PassCGI {
		return ctx
	}
	q := url.Values{store.ViaKey: {store.ViaCache}}
	if vo != "" {
		q.Set("vo", vo)
	}
	return store.WithUpstream(ctx, &store.Request{Opaque: q, VO: vo})
}

// upPath is the name of p at upstream u.
func (r *route) upPath(u *upstream, p string) string {
	if u.PathPrefix == "" {
		return p
	}
	rest := strings.TrimPrefix(p, r.prefix)
	if r.prefix == "/" {
		rest = p
	}
	if rest == "" {
		return u.PathPrefix
	}
	return strings.TrimSuffix(u.PathPrefix, "/") + rest
}

// each runs op against each upstream in order until one succeeds. If all
// fail, the error of the first upstream that had the file wins over "not
// found" from the others, so a transient failure is not reported as a
// missing file.
func (c *Cache) each(ctx context.Context, r *route, op func(u *upstream) error) error {
	return c.eachOf(ctx, r.ups, nil, op)
}

// eachOf is each over ups, after the errors errs of upstreams asked
// before them.
func (c *Cache) eachOf(ctx context.Context, ups []*upstream, errs []error, op func(u *upstream) error) error {
	for _, u := range ups {
		err := op(u)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, c.upstreamErr(u, err))
	}
	for _, err := range errs {
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return errs[0]
}

// upstreamErr counts and logs a failure of u that is not an answer about
// the file (a cut, a timeout) and marks it unavailable.
func (c *Cache) upstreamErr(u *upstream, err error) error {
	if store.IsAnswer(err) {
		return err
	}
	c.ctr.upstreamErrors.Add(1)
	c.log.Warn("upstream failed", "upstream", u.Name, "err", err)
	return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, u.Name, err)
}

// upFiles are one cached file's open upstream handles: one per (upstream,
// stream), opened on first use, so a file's blocks travel over all
// streams at once. Opens of different streams proceed in parallel.
type upFiles struct {
	mu      sync.Mutex
	handles map[[2]int]*upHandle
}

type upHandle struct {
	u     *upstream     // whose open count it is in
	ready chan struct{} // closed when f and err are set
	f     store.File
	err   error
}

type handleState int

const (
	handleNone handleState = iota
	handleOpening
	handleReady // open, or failed to (the fetch then fails over at once)
)

// state says whether a handle on stream si of upstream ui is open.
func (h *upFiles) state(ui, si int) handleState {
	h.mu.Lock()
	uh := h.handles[[2]int{ui, si}]
	h.mu.Unlock()
	if uh == nil {
		return handleNone
	}
	select {
	case <-uh.ready:
		return handleReady
	default:
		return handleOpening
	}
}

// has reports whether a handle on stream si of upstream ui is open or
// opening.
func (h *upFiles) has(ui, si int) bool { return h.state(ui, si) != handleNone }

// retire closes uh off the caller's path (a close waits for the
// upstream's answer). It leaves the open count at once when uh is open
// already, so a cap check right after sees it gone.
func (uh *upHandle) retire() {
	select {
	case <-uh.ready:
		if uh.f != nil {
			uh.u.open.Add(-1)
			go uh.f.Close()
		}
	default:
		go func() {
			<-uh.ready
			if uh.f != nil {
				uh.u.open.Add(-1)
				uh.f.Close()
			}
		}()
	}
}

func (h *upFiles) get(ctx context.Context, r *route, ui, si int, name, vo string, size int64) (store.File, error) {
	key := [2]int{ui, si}
	h.mu.Lock()
	uh := h.handles[key]
	if uh == nil {
		if h.handles == nil {
			h.handles = map[[2]int]*upHandle{}
		}
		uh = &upHandle{u: r.ups[ui], ready: make(chan struct{})}
		h.handles[key] = uh
		h.mu.Unlock()
		uh.f, uh.err = openUpstream(ctx, r, ui, si, name, vo, size)
		if uh.err != nil {
			h.mu.Lock()
			if h.handles[key] == uh {
				delete(h.handles, key)
			}
			h.mu.Unlock()
		} else {
			uh.u.open.Add(1) // before ready: a retire waits for it
		}
		close(uh.ready)
	} else {
		h.mu.Unlock()
	}
	select {
	case <-uh.ready:
		return uh.f, uh.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func openUpstream(ctx context.Context, r *route, ui, si int, name, vo string, size int64) (store.File, error) {
	u := r.ups[ui]
	f, err := u.Streams[si].Open(upCtx(ctx, u, vo), r.upPath(u, name))
	if err != nil {
		return nil, err
	}
	// Blocks from another version of the file must not mix with ours.
	got := int64(-1)
	if sz, ok := f.(interface{ Size() int64 }); ok {
		got = sz.Size()
	} else if fi, err := f.Stat(); err == nil {
		got = fi.Size
	}
	if got >= 0 && got != size {
		go f.Close()
		return nil, fmt.Errorf("upstream copy has %d bytes, the cached version %d: file changed", got, size)
	}
	return f, nil
}

// drop closes a handle that failed, so the next use opens a fresh one
// (the client re-dials a dropped connection).
func (h *upFiles) drop(ui, si int, f store.File) {
	h.mu.Lock()
	if uh := h.handles[[2]int{ui, si}]; uh != nil && uh.f == f {
		delete(h.handles, [2]int{ui, si})
		h.mu.Unlock()
		uh.retire()
		return
	}
	h.mu.Unlock()
	go f.Close()
}

func (h *upFiles) dropUpstream(ui int) {
	h.closeWhere(func(k [2]int, _ *upHandle) bool { return k[0] == ui })
}

// closeAll closes every handle and says how many there were on u (on
// all upstreams when u is nil).
func (h *upFiles) closeAll(u *upstream) int {
	n := 0
	h.closeWhere(func(_ [2]int, uh *upHandle) bool {
		if u == nil || uh.u == u {
			n++
		}
		return true
	})
	return n
}

func (h *upFiles) closeWhere(match func([2]int, *upHandle) bool) {
	h.mu.Lock()
	var gone []*upHandle
	for k, uh := range h.handles {
		if match(k, uh) {
			gone = append(gone, uh)
			delete(h.handles, k)
		}
	}
	h.mu.Unlock()
	for _, uh := range gone {
		uh.retire()
	}
}

// readUpstream fills p from offset off of e's file, trying each upstream
// in order and each twice (a retry re-dials after a cut connection). It
// succeeds only with exactly len(p) bytes from a copy of the same size:
// short or foreign data is an error, never served.
func (c *Cache) readUpstream(e *entry, p []byte, off int64) error {
	closed, err := c.failover(e, len(p), func(ui int, u *upstream) error { return c.readOnce(e, ui, u, p, off) })
	if err != nil && !closed {
		return &store.PathError{Op: "read", Path: e.path, Err: fmt.Errorf("%w (%w): no upstream could serve bytes %d-%d: %w", store.ErrIO, store.ErrUnavailable, off, off+int64(len(p))-1, err)}
	}
	return err
}

// failover runs read against each of e's upstreams in order, each
// twice, until one succeeds, counting n bytes read; the error joins every
// attempt's, and closed says the cache closed under it. The callers wrap
// the error in both sentinels: root:// clients see an I/O error on the
// read, https clients a 502 or 504.
func (c *Cache) failover(e *entry, n int, read func(ui int, u *upstream) error) (closed bool, err error) {
	var errs []error
	for ui, u := range e.route.ups {
		for try := 0; try < 2; try++ {
			if try > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			err := read(ui, u)
			if err == nil {
				c.ctr.upstreamBytes.Add(int64(n))
				return false, nil
			}
			c.ctr.upstreamErrors.Add(1)
			errs = append(errs, fmt.Errorf("%s: %w", u.Name, err))
			if c.closed.Load() {
				return true, errors.Join(errs...)
			}
		}
		c.log.Warn("upstream read failed, trying the next", "path", e.path, "upstream", u.Name, "err", errs[len(errs)-1])
	}
	return false, errors.Join(errs...)
}

func (c *Cache) readOnce(e *entry, ui int, u *upstream, p []byte, off int64) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.FetchTimeout)
	defer cancel()
	si := u.take(e.streamCost(ui, u, 1))
	defer u.done(si)
	f, err := c.upFile(ctx, e, ui, u, si)
	if err != nil {
		return err
	}
	var n int
	if cr, ok := f.(store.ContextReaderAt); ok {
		n, err = cr.ReadAtContext(ctx, p, off)
	} else {
		n, err = f.ReadAt(p, off)
	}
	if n == len(p) && (err == nil || errors.Is(err, io.EOF)) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = fmt.Errorf("short read: %d of %d bytes (file truncated upstream?)", n, len(p))
	}
	// A cut usually takes every connection to this upstream with it: drop
	// all its handles so the retry re-opens on a fresh connection.
	e.up.dropUpstream(ui)
	return err
}

// upFile returns e's file at stream si of upstream ui, opening it, and
// keeps the upstream within its cap of open files.
func (c *Cache) upFile(ctx context.Context, e *entry, ui int, u *upstream, si int) (store.File, error) {
	e.mu.Lock()
	vo := e.vo
	e.mu.Unlock()
	f, err := e.up.get(ctx, e.route, ui, si, e.path, vo, e.size())
	if err != nil {
		return nil, err
	}
	c.trimHandles(u)
	return f, nil
}
