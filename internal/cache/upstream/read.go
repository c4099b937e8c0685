package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/store"
)

// GroupSlack is how many more requests in flight a stream holding the
// file may have than the least busy stream before a request goes to a
// stream that must open the file first (see streamCost): a group of
// fetches (a few hundred KiB) waits about a millisecond per request ahead
// of it on a stream, far less than the round trip of opening the file on
// another.
const GroupSlack = 4

// readVer is an upstream file that reads scattered ranges in one request
// (root:// upstreams: kXR_readv).
type readVer interface {
	ReadV(ctx context.Context, bufs [][]byte, offs []int64) error
}

// ReadAt fills p from offset off of the file, trying each server in
// order and each twice (a retry re-dials after a cut connection). It
// succeeds only with exactly len(p) bytes from a copy of the expected
// size: short or foreign data is an error, never served.
func (h *File) ReadAt(p []byte, off int64) error {
	closed, err := h.failover(len(p), func(ui int, u *Server, retry bool) error {
		return h.readOnce(ui, u, p, off, h.pick(ui, u, 1, retry))
	})
	if err != nil && !closed {
		return &store.PathError{Op: "read", Path: h.path, Err: fmt.Errorf("%w (%w): no upstream could serve bytes %d-%d: %w", store.ErrIO, store.ErrUnavailable, off, off+int64(len(p))-1, err)}
	}
	return err
}

// ReadV is ReadAt for several ranges: each server in order, each twice,
// all ranges or an error.
func (h *File) ReadV(bufs [][]byte, offs []int64) error {
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	closed, err := h.failover(total, func(ui int, u *Server, retry bool) error {
		return h.readOnceMany(ui, u, bufs, offs, h.pick(ui, u, GroupSlack, retry))
	})
	if err != nil && !closed {
		return &store.PathError{Op: "read", Path: h.path, Err: fmt.Errorf("%w (%w): no upstream could serve %d ranges from byte %d: %w", store.ErrIO, store.ErrUnavailable, len(bufs), offs[0], err)}
	}
	return err
}

// failover runs read against each of the route's servers in order, each
// twice, until one succeeds, counting n bytes read; the error joins every
// attempt's, and closed says the cache closed under it. The callers wrap
// the error in both sentinels: root:// clients see an I/O error on the
// read, https clients a 502 or 504.
func (h *File) failover(n int, read func(ui int, u *Server, retry bool) error) (closed bool, err error) {
	s := h.route.set
	var errs []error
	for ui, u := range h.route.servers {
		for try := 0; try < 2; try++ {
			if try > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			err := read(ui, u, try > 0)
			if err == nil {
				s.bytes.Add(int64(n))
				return false, nil
			}
			s.errors.Add(1)
			errs = append(errs, fmt.Errorf("%s: %w", u.Name, err))
			// A dropped connection may have taken the server's other
			// streams with it: have them dialed again now, not at the
			// next open, so the retries spread over them.
			s.wantConnected(u)
			if s.base.Err() != nil {
				return true, errors.Join(errs...)
			}
		}
		s.opts.Log.Warn("upstream read failed, trying the next", "path", h.path, "upstream", u.Name, "err", errs[len(errs)-1])
	}
	return false, errors.Join(errs...)
}

// pick prices the streams of server ui for a read (streamCost, with
// open the price of opening the file there). A retry follows a dropped
// connection, and the retries of every read in flight on it come at
// once: priced so, they would queue behind the first on the one stream
// that reopens the file (or was dialed again) first and go at one
// connection's speed (a server answers one read per connection at a
// time), so each takes the least busy stream instead, dialing or
// opening there as it must.
func (h *File) pick(ui int, u *Server, open int, retry bool) func(si int) int {
	if retry {
		return func(int) int { return 0 }
	}
	return h.streamCost(ui, u, open)
}

func (h *File) readOnce(ui int, u *Server, p []byte, off int64, cost func(si int) int) error {
	ctx, cancel := context.WithTimeout(h.route.set.base, h.route.set.opts.FetchTimeout)
	defer cancel()
	si := u.take(cost)
	defer u.done(si)
	f, err := h.open(ctx, ui, si)
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
	h.dropServer(ui)
	return err
}

// readOnceMany reads the ranges from server ui: one readv where the
// upstream file has it, else a read per range, in parallel.
func (h *File) readOnceMany(ui int, u *Server, bufs [][]byte, offs []int64, cost func(si int) int) error {
	ctx, cancel := context.WithTimeout(h.route.set.base, h.route.set.opts.FetchTimeout)
	defer cancel()
	// A group queues behind up to GroupSlack requests on a stream
	// holding the file rather than open it on another.
	si := u.take(cost)
	f, err := h.open(ctx, ui, si)
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
			g.Go(func() error { return h.readOnce(ui, u, bufs[i], offs[i], h.streamCost(ui, u, 1)) })
		}
		return g.Wait()
	}
	h.dropServer(ui) // as readOnce: the retry re-opens
	return err
}

// streamCost prices the streams of server ui for a read of the file, in
// requests in flight: nothing where the file is open; open where it must
// be opened first, or an open under way must finish (an upstream open
// costs a round trip, as much as the read it precedes: a scattered
// reader touching a file on every stream paid it on a quarter of its
// reads); three times that on a stream not connected, which must dial
// and log in first. Reusing a handle also saves a file descriptor
// upstream.
func (h *File) streamCost(ui int, u *Server, open int) func(si int) int {
	return func(si int) int {
		switch h.state(ui, si) {
		case handleReady:
			return 0
		case handleOpening:
			return open
		}
		if connected(u.Streams[si]) {
			return open
		}
		return 3 * open
	}
}

// openCost prices the streams of the first server u for opening the
// file: the least busy connected stream not holding it, unless all such
// are busier by a few requests than one that must dial and log in first
// (two round trips or more). A stream holding the file already costs
// most: a second handle there is closed unused.
func (h *File) openCost(u *Server) func(si int) int {
	return func(si int) int {
		switch {
		case h.has(0, si):
			return 1 << 20
		case connected(u.Streams[si]):
			return 0
		}
		return 2 * GroupSlack
	}
}

// Preopen opens the file at its first server, in the background, until
// want streams hold it: an upstream open costs a round trip, as much as
// the read it precedes, and the reads spread over those streams would
// each wait for one. hold is called before each open starts and what it
// returns once the open is done (the caller keeps the file's state
// while it runs).
func (h *File) Preopen(want int, hold func() (release func())) {
	if len(h.route.servers) == 0 {
		return
	}
	have := h.Handles()
	if have >= want {
		return
	}
	s := h.route.set
	u := h.route.servers[0]
	s.wantConnected(u)
	for range min(want-have, len(u.Streams)-have) {
		si := u.take(h.openCost(u))
		release := hold()
		go func() {
			defer release()
			defer u.done(si)
			ctx, cancel := context.WithTimeout(s.base, s.opts.FetchTimeout)
			defer cancel()
			h.open(ctx, 0, si) // an error shows again on the first read
		}()
	}
}
