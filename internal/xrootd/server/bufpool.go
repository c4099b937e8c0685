package server

import (
	"context"
	"fmt"
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
	free chan *poolBuf
}

type poolBuf struct {
	b      []byte
	mapped bool // allocated outside the Go heap; freed with freeBuf
}

func newBufPool(size, n int) *bufPool {
	p := &bufPool{size: size, n: n, free: make(chan *poolBuf, n)}
	for range n {
		p.free <- &poolBuf{}
	}
	return p
}

// get waits for a buffer or for ctx.
func (p *bufPool) get(ctx context.Context) (*poolBuf, error) {
	var b *poolBuf
	select {
	case b = <-p.free:
	default:
		select {
		case b = <-p.free:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a transfer buffer: %w", ctx.Err())
		}
	}
	if b.b == nil {
		b.b, b.mapped = allocBuf(p.size)
	}
	return b, nil
}

func (p *bufPool) put(b *poolBuf) { p.free <- b }

// release frees the buffers once every one is back in the pool (after
// Shutdown); buffers still lent out are left alone.
func (p *bufPool) release() {
	for range p.n {
		select {
		case b := <-p.free:
			if b.mapped {
				freeBuf(b.b)
			}
			b.b, b.mapped = nil, false
			defer func() { p.free <- b }()
		default:
			return
		}
	}
}

// buffer is one pooled buffer lent to a request; release returns it and
// the session's share.
type buffer struct {
	b    []byte
	pb   *poolBuf
	sess *session
}

// getBuf lends a data request a transfer buffer, waiting while the session
// already holds its share of two or the pool is empty. (The data lane takes
// one at a time; the share is the bound that keeps one connection from
// draining the pool whatever its requests do.) Fails when the session ends.
func (s *session) getBuf() (*buffer, error) {
	select {
	case s.bufShare <- struct{}{}:
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
	pb, err := s.srv.bufs.get(s.ctx)
	if err != nil {
		<-s.bufShare
		return nil, err
	}
	return &buffer{b: pb.b, pb: pb, sess: s}, nil
}

func (b *buffer) release() {
	b.sess.srv.bufs.put(b.pb)
	<-b.sess.bufShare
}
