package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"sitebox/internal/xrootd/proto"
)

// Do sends a request and waits for its complete answer (all kXR_oksofar
// parts joined). kXR_error becomes an *Error; kXR_redirect a *Redirect;
// kXR_wait is honoured by resending after the wait, bounded by ctx and by
// Options.MaxWait in all.
func (c *Conn) Do(ctx context.Context, id uint16, body [16]byte, data []byte) ([]byte, error) {
	w := waiter{max: c.maxWait}
	return c.do(ctx, &w, id, body, data, nil, nil)
}

// doInto is Do for a read: the answer's data lands in dst (which must
// hold all of it) and the result is the part of dst it filled.
func (c *Conn) doInto(ctx context.Context, id uint16, body [16]byte, dst []byte) ([]byte, error) {
	w := waiter{max: c.maxWait}
	return c.do(ctx, &w, id, body, nil, dst, nil)
}

// do is Do with the wait budget of a whole operation, which may span
// several servers.
func (c *Conn) do(ctx context.Context, w *waiter, id uint16, body [16]byte, data, dst []byte, sk sink) ([]byte, error) {
	for {
		r, err := c.answer(ctx, id, body, data, dst, sk)
		if err != nil {
			return nil, err
		}
		switch r.status {
		case proto.StatusOK:
			return r.body, nil
		case proto.StatusError:
			return nil, parseError(r.body)
		case proto.StatusRedirect:
			return nil, parseRedirect(r.body)
		case proto.StatusWait:
			if err := w.wait(ctx, c.addr, id, r.body); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("xrootd: unexpected response status %d to %s", r.status, proto.RequestName(id))
		}
	}
}

// sink is where an answer's data goes instead of a reply body: a
// *vecSink (readv) or a *pgSink (pgread); nil for neither.
type sink interface{ result() error }

// answer is one round trip bounded by the I/O timeout (Options.IOTimeout),
// so a server that stops answering (stopped, cut off without a reset)
// fails the request instead of hanging it. A checksum query is not: a
// server computes it as it is asked, which takes minutes for a large
// file.
func (c *Conn) answer(ctx context.Context, id uint16, body [16]byte, data, dst []byte, sk sink) (reply, error) {
	if id != proto.ReqQuery {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.ioTimeout)
		defer cancel()
	}
	return c.roundTrip(ctx, id, body, data, dst, sk)
}

func (c *Conn) roundTrip(ctx context.Context, id uint16, body [16]byte, data, dst []byte, sk sink) (reply, error) {
	cl := &call{reply: make(chan reply, 1), dst: dst}
	switch s := sk.(type) {
	case *vecSink:
		cl.vec = s
	case *pgSink:
		cl.pg = s
	}
	sid, err := c.send(cl, id, body, data)
	if err != nil {
		return reply{}, err
	}
	select {
	case r := <-cl.reply:
		return r, r.err
	case <-ctx.Done():
		// The answer may still come; the reader drops it as unknown.
		c.mu.Lock()
		delete(c.pending, sid)
		filling := c.filling == cl
		c.mu.Unlock()
		if filling {
			// The reader is writing into the caller's buffer, which the
			// caller may reuse once we return: end the read (and the
			// connection, whose stream is mid-frame) and wait for it.
			c.fail(fmt.Errorf("%w: %s: a read was abandoned mid-frame: %v", ErrClosed, c.addr, ctx.Err()))
			c.fillMu.Lock()
			c.fillMu.Unlock()
		}
		return reply{}, ctx.Err()
	}
}

// send registers cl under a fresh stream id and sends the request; its
// answer comes on cl.reply. An error says the connection had failed
// before (nothing was sent); a failed write fails the connection, and
// with it cl.
func (c *Conn) send(cl *call, id uint16, body [16]byte, data []byte) (proto.StreamID, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return proto.StreamID{}, err
	}
	var sid proto.StreamID
	for {
		c.next++
		binary.BigEndian.PutUint16(sid[:], c.next)
		if c.pending[sid] == nil && c.next != 0 {
			break
		}
	}
	c.pending[sid] = cl
	c.mu.Unlock()

	frame := proto.EncodeRequest(sid, id, body, data)
	c.wmu.Lock()
	c.nc.SetWriteDeadline(time.Now().Add(2 * time.Minute))
	_, err := c.nc.Write(frame)
	c.wmu.Unlock()
	if err != nil {
		c.fail(fmt.Errorf("%w: %v", ErrClosed, err))
	}
	return sid, nil
}

// forget drops cl, sent as sid, from the pending calls: a caller that
// gave up. Frames still coming for it are read and dropped.
func (c *Conn) forget(sid proto.StreamID, cl *call) {
	c.mu.Lock()
	if c.pending[sid] == cl {
		delete(c.pending, sid)
	}
	c.mu.Unlock()
}
