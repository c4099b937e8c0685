package server

import (
	"context"
	"fmt"
	"sync"
)

// bufPool is a fixed set of equally sized transfer buffers, allocated on
// first use and reused until the server shuts down. Unlike sync.Pool it
// puts a hard bound on the memory transfers take, whatever the number of
// clients. Where possible the buffers live outside the Go heap (see
// allocBuf), so they do not inflate the garbage collector's target either:
// a heap of 32 MiB of live buffers would otherwise let 32 MiB more of
// garbage accumulate before a collection.
type bufPool struct {
	size int
	n    int
	// free holds a token per buffer not lent out; taking one is the
	// right to a buffer.
	free chan struct{}
	mu   sync.Mutex
	// idle are the allocated buffers not lent out, the most recently
	// returned last: handed out first, so a server with a few busy
	// sessions keeps reusing the same buffers, still in the CPU's caches
	// (a vector read copies through the buffer twice), and allocates
	// only as many as are lent at once.
	idle []*poolBuf
}

type poolBuf struct {
	b      []byte
	mapped bool // allocated outside the Go heap; freed with freeBuf
}

func newBufPool(size, n int) *bufPool {
	p := &bufPool{size: size, n: n, free: make(chan struct{}, n)}
	for range n {
		p.free <- struct{}{}
	}
	return p
}

// get waits for a buffer or for ctx.
func (p *bufPool) get(ctx context.Context) (*poolBuf, error) {
	select {
	case <-p.free:
		return p.take(), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a transfer buffer: %w", ctx.Err())
	}
}

// tryGet returns a free buffer, or nil if all are lent out.
func (p *bufPool) tryGet() *poolBuf {
	select {
	case <-p.free:
		return p.take()
	default:
		return nil
	}
}

// take hands out the most recently returned buffer, or a new one; the
// caller holds a token.
func (p *bufPool) take() *poolBuf {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		b := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	b := &poolBuf{}
	b.b, b.mapped = allocBuf(p.size)
	return b
}

func (p *bufPool) put(b *poolBuf) {
	p.mu.Lock()
	p.idle = append(p.idle, b)
	p.mu.Unlock()
	p.free <- struct{}{}
}

// release frees the buffers not lent out (after Shutdown); buffers
// still lent out are left alone.
func (p *bufPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.idle {
		if b.mapped {
			freeBuf(b.b)
		}
	}
	p.idle = nil
}

// perClient is how many pooled buffers the sessions of one client address
// may hold together: half the pool, so one address alone — however many
// sessions it opens — always leaves the other half to everyone else (which
// readv's large segments, too big for a spare buffer, need).
func (p *bufPool) perClient() int { return max(p.n/2, 1) }

// spareBufSize is the size of the buffers a request uses when every pooled
// buffer is lent out: the smallest MaxReadChunk, enough for a pgwrite unit
// and a few dozen pgread pages per frame.
const spareBufSize = 64 << 10

// spareBufs holds the spare buffers between requests.
type spareBufs struct{ p sync.Pool }

func (sb *spareBufs) get() *[]byte {
	if b, ok := sb.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, spareBufSize)
	return &b
}

func (sb *spareBufs) put(b *[]byte) { sb.p.Put(b) }

// buffer is one buffer lent to a request; release returns it and the
// session's share.
type buffer struct {
	b     []byte
	pb    *poolBuf // from the pool, or nil
	spare *[]byte  // a spare buffer, or nil
	sess  *session
}

// getBuf lends a data request or a write a transfer buffer, waiting only
// while the session already holds its share of two (the data lane and the
// reader take one each, so in practice never). Requests never wait for
// another session's buffers: when the pool is empty — clients that stopped
// reading their answers or trickle their writes hold pooled buffers until
// the write or request timeout ends them — a small spare buffer serves
// instead, more frames for the same bytes but no stall. So a session holds
// at most its own share of the pool, the sessions of one address at most
// half of it, and one slow or hostile client never takes the buffers
// others need. Fails when the session ends.
func (s *session) getBuf() (*buffer, error) { return s.getBufAtLeast(0) }

// getBufAtLeast is getBuf for a request that needs n contiguous bytes: one
// bigger than a spare buffer (a readv segment of more than 64 KiB) waits
// for the pool instead.
func (s *session) getBufAtLeast(n int) (*buffer, error) {
	select {
	case s.bufShare <- struct{}{}:
	case <-s.ctx.Done():
		return nil, fmt.Errorf("waiting for a transfer buffer: %w", s.ctx.Err())
	}
	lim, ip := s.srv.limits, s.clientIP
	if lim.takeBuffer(ip, s.srv.bufs.perClient(), false) {
		if pb := s.srv.bufs.tryGet(); pb != nil {
			return &buffer{b: pb.b, pb: pb, sess: s}, nil
		}
		lim.dropBuffer(ip)
	}
	if n > spareBufSize {
		pb, err := s.srv.bufs.get(s.ctx)
		if err != nil {
			<-s.bufShare
			return nil, err
		}
		lim.takeBuffer(ip, 0, true)
		return &buffer{b: pb.b, pb: pb, sess: s}, nil
	}
	sp := s.srv.spare.get()
	return &buffer{b: *sp, spare: sp, sess: s}, nil
}

func (b *buffer) release() {
	if b.pb != nil {
		b.sess.srv.bufs.put(b.pb)
		b.sess.srv.limits.dropBuffer(b.sess.clientIP)
	} else {
		b.sess.srv.spare.put(b.spare)
	}
	<-b.sess.bufShare
}
