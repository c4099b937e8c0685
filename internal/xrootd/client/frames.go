package client

import (
	"fmt"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// readFrame reads the body of a frame whose header is h and delivers it.
func (c *Conn) readFrame(h proto.ResponseHeader) error {
	if h.Status == proto.StatusStatus {
		return c.readStatus(h)
	}
	data := h.Status == proto.StatusOK || h.Status == proto.StatusOKSoFar
	c.mu.Lock()
	cl := c.pending[h.Stream]
	if cl != nil && data && cl.stream != nil {
		return c.readStream(cl, h) // unlocks c.mu
	}
	if cl != nil && data && (cl.vec != nil || cl.dst != nil && cl.n+int(h.Dlen) <= len(cl.dst)) {
		return c.readInto(cl, h) // unlocks c.mu
	}
	c.mu.Unlock()
	b, err := proto.ReadResponseBody(c.nc, make([]byte, h.Dlen))
	if err != nil {
		return err
	}
	c.mu.Lock()
	if cl == nil || c.pending[h.Stream] != cl {
		c.mu.Unlock()
		return nil // a call that gave up (ctx ended)
	}
	if cl.dst != nil && data {
		// More data than the read asked for: a broken server.
		delete(c.pending, h.Stream)
		c.mu.Unlock()
		cl.reply <- reply{err: fmt.Errorf("%w: %s answered more bytes than asked", store.ErrIO, c.addr)}
		return nil
	}
	if h.Status == proto.StatusOKSoFar {
		cl.body = append(cl.body, b...)
		c.mu.Unlock()
		return nil
	}
	delete(c.pending, h.Stream)
	c.mu.Unlock()
	if h.Status == proto.StatusOK && len(cl.body) > 0 {
		b = append(cl.body, b...)
	}
	cl.reply <- reply{status: h.Status, body: b}
	return nil
}

// readInto reads a data frame of cl straight into the caller's buffers:
// cl.vec for a readv answer, else cl.dst. Called with c.mu held; fillMu
// is taken before c.mu is let go, so a caller that gives up (roundTrip)
// sees c.filling and waits for the read to end before it lets its
// buffers be reused.
func (c *Conn) readInto(cl *call, h proto.ResponseHeader) error {
	c.fillMu.Lock()
	c.filling = cl
	c.mu.Unlock()
	var err error
	var body []byte
	if cl.vec != nil {
		err = cl.vec.consume(c.nc, int(h.Dlen))
	} else {
		_, err = proto.ReadResponseBody(c.nc, cl.dst[cl.n:cl.n+int(h.Dlen)])
		cl.n += int(h.Dlen)
		body = cl.dst[:cl.n]
	}
	c.mu.Lock()
	c.filling = nil
	c.fillMu.Unlock()
	current := c.pending[h.Stream] == cl
	final := err == nil && current && h.Status == proto.StatusOK
	if final {
		delete(c.pending, h.Stream)
	}
	c.mu.Unlock()
	if final {
		cl.reply <- reply{status: h.Status, body: body}
	}
	return err
}
