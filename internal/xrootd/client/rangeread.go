package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// A streamed read (ReadRange) asks for its whole range with kXR_read and
// hands the answer on as it arrives, a piece at a time, instead of
// waiting for all of it in one buffer: a copy writes each piece while it
// is still in the CPU's cache. The connection's reader fills pieces from
// the socket and queues them for the read's reader; at most streamPieces
// wait there, so a read streams through a bounded amount of memory
// however large its range, and a reader that falls behind holds the
// connection back as TCP would.
const (
	pieceSize    = 128 << 10
	streamPieces = 8
)

var _ store.RangeReader = (*File)(nil)

// ReadRange streams the n bytes at off: it yields exactly those bytes or
// fails, never fewer (a range past the end of the file fails with
// io.ErrUnexpectedEOF). Close ends the read. A connection that drops
// mid-range is recovered as ReadAt recovers it: the file is opened again
// and the rest of the range asked for. A file read with page checks
// (Options.PageChecks) is read with ReadAt, one round trip per Read.
func (f *File) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n < 0 {
		return nil, pathOp("read", f.name, fmt.Errorf("%w: range %d+%d", store.ErrInvalid, off, n))
	}
	r := &rangeReader{f: f, ctx: ctx, w: f.waiter(), pos: off, recv: off, end: off + n, dropAt: -1}
	if n > 0 && !f.pages {
		r.send()
	}
	return r, nil
}

// rangeReader is one streamed read. Not safe for concurrent use.
type rangeReader struct {
	f   *File
	ctx context.Context
	w   *waiter // the wait budget of the whole range

	pos, recv, end int64 // handed to Read; received; the range's end
	dropAt         int64 // recv when the connection last dropped, or -1

	// The request in flight: sent on c as sid, asking up to reqEnd.
	c      *Conn
	cl     *call
	sid    proto.StreamID
	reqEnd int64
	began  time.Time
	// ended is the request's final answer, once it came; the pieces
	// queued before it are handed out first.
	ended *reply

	piece []byte // the piece being handed out (cur is its rest)
	cur   []byte
	err   error // sticky: the read failed or was closed
	timer *time.Timer
}

func (r *rangeReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.pos == r.end {
		return 0, io.EOF
	}
	if r.f.pages {
		return r.readAt(p)
	}
	if len(r.cur) == 0 {
		r.release()
		b, err := r.next()
		if err != nil {
			r.err = err
			return 0, err
		}
		r.piece, r.cur = b, b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.pos += int64(n)
	return n, nil
}

// WriteTo writes the rest of the range to w a piece at a time, straight
// from the buffers the connection's reader filled: no copy into the
// caller's memory. w is given pieces of up to pieceSize bytes.
func (r *rangeReader) WriteTo(w io.Writer) (int64, error) {
	if r.f.pages {
		return io.CopyBuffer(w, struct{ io.Reader }{r}, make([]byte, pieceSize))
	}
	var total int64
	for r.err == nil && r.pos < r.end {
		if len(r.cur) == 0 {
			r.release()
			b, err := r.next()
			if err != nil {
				r.err = err
				break
			}
			r.piece, r.cur = b, b
		}
		n, err := w.Write(r.cur)
		r.cur = r.cur[n:]
		r.pos += int64(n)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, r.err
}

// readAt is Read for a file read with page checks.
func (r *rangeReader) readAt(p []byte) (int, error) {
	p = p[:min(int64(len(p)), r.end-r.pos)]
	n, err := r.f.ReadAtContext(r.ctx, p, r.pos)
	r.pos += int64(n)
	if n < len(p) {
		if err == nil || errors.Is(err, io.EOF) {
			err = pathOp("read", r.f.name, fmt.Errorf("%w: the file ends at %d, within the range read up to %d", io.ErrUnexpectedEOF, r.pos, r.end))
		}
		r.err = err
		return n, err
	}
	return n, nil
}

// Close ends the read: a request still in flight is forgotten, and the
// connection's reader drops the rest of its answer.
func (r *rangeReader) Close() error {
	r.drop()
	r.release()
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.err == nil {
		r.err = pathOp("read", r.f.name, errors.New("read after close"))
	}
	return nil
}

// release gives the piece handed out back to its connection's pool.
func (r *rangeReader) release() {
	if r.piece != nil {
		r.c.putPiece(r.piece)
		r.piece, r.cur = nil, nil
	}
}

// drop forgets the request in flight, if any.
func (r *rangeReader) drop() {
	if r.cl != nil {
		close(r.cl.stream.done)
		r.c.forget(r.sid, r.cl)
		r.cl, r.ended = nil, nil
	}
}

// send asks for the rest of the range, up to maxIO bytes of it, on the
// file's connection now. A connection that had failed already answers at
// once with its error.
func (r *rangeReader) send() {
	want := min(r.end-r.recv, maxIO)
	var body [16]byte
	binary.BigEndian.PutUint64(body[4:12], uint64(r.recv))
	binary.BigEndian.PutUint32(body[12:16], uint32(want))
	c, h := r.f.at()
	handleAt(&body, h)
	cl := &call{reply: make(chan reply, 1), stream: &streamSink{c: c, pieces: make(chan []byte, streamPieces), done: make(chan struct{})}}
	r.c, r.cl, r.reqEnd, r.began, r.ended = c, cl, r.recv+want, time.Now(), nil
	sid, err := c.send(cl, proto.ReqRead, body, nil)
	r.sid = sid
	if err != nil {
		r.ended = &reply{err: err}
	}
}

// next waits for the next piece of the range.
func (r *rangeReader) next() ([]byte, error) {
	for {
		if r.cl == nil {
			r.send()
		}
		if r.ended != nil {
			select {
			case b := <-r.cl.stream.pieces:
				return r.got(b)
			default:
			}
			if err := r.finish(); err != nil {
				return nil, err
			}
			continue
		}
		if r.timer == nil {
			r.timer = time.NewTimer(r.c.ioTimeout)
		} else {
			r.timer.Reset(r.c.ioTimeout)
		}
		select {
		case b := <-r.cl.stream.pieces:
			r.timer.Stop()
			return r.got(b)
		case rep := <-r.cl.reply:
			// The pieces sent before the answer are all queued by now:
			// the connection's reader queues them before it answers.
			r.ended = &rep
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		case <-r.timer.C:
			return nil, pathOp("read", r.f.name, fmt.Errorf("%s sent nothing of the range at %d for %v: %w", r.c.addr, r.recv, r.c.ioTimeout, context.DeadlineExceeded))
		}
	}
}

// got takes piece b of the request in flight.
func (r *rangeReader) got(b []byte) ([]byte, error) {
	if r.recv+int64(len(b)) > r.reqEnd {
		r.c.putPiece(b)
		return nil, pathOp("read", r.f.name, fmt.Errorf("%w: %s answered more bytes than asked", store.ErrIO, r.c.addr))
	}
	r.recv += int64(len(b))
	return b, nil
}

// finish acts on the final answer of the request in flight, all its
// data taken: nil says go on (the rest of the range is asked for next).
func (r *rangeReader) finish() error {
	rep := *r.ended
	r.cl, r.ended = nil, nil
	if rep.err != nil {
		// The connection failed: open the file again and ask for the
		// rest there; but a server that drops the connection again
		// before sending anything more is given up on once the wait
		// budget is spent.
		if r.dropAt == r.recv && r.w.total+r.w.out.Lasted() >= r.w.max {
			return pathOp("read", r.f.name, fmt.Errorf("%w: %s drops the connection at %d, again after %v: %w",
				store.ErrUnavailable, r.c.addr, r.recv, r.w.out.Lasted().Round(time.Millisecond), rep.err))
		}
		r.dropAt = r.recv
		if err := r.f.recover(r.ctx, r.w, r.c, rep.err, r.began); err != nil {
			return pathOp("read", r.f.name, err)
		}
		return nil
	}
	switch rep.status {
	case proto.StatusOK:
		if r.recv < r.reqEnd {
			return pathOp("read", r.f.name, fmt.Errorf("%w: the file ends at %d, within the range read up to %d", io.ErrUnexpectedEOF, r.recv, r.end))
		}
		return nil
	case proto.StatusWait:
		return pathOp("read", r.f.name, r.w.wait(r.ctx, r.c.addr, proto.ReqRead, rep.body))
	case proto.StatusError:
		return pathOp("read", r.f.name, parseError(rep.body))
	case proto.StatusRedirect:
		return pathOp("read", r.f.name, parseRedirect(rep.body))
	}
	return pathOp("read", r.f.name, fmt.Errorf("xrootd: unexpected response status %d to kXR_read", rep.status))
}

// streamSink is where the connection's reader puts a streamed read's
// data.
type streamSink struct {
	c      *Conn
	pieces chan []byte
	done   chan struct{} // closed when the read is over: drop the rest
}

// consume reads n bytes of an answer frame from src into pieces and
// queues them. Once the read is over the rest is read and dropped; a
// reader that takes no piece for the I/O timeout fails the connection
// (its reader cannot wait on one read for ever).
func (s *streamSink) consume(src io.Reader, n int) error {
	for n > 0 {
		m := min(n, pieceSize)
		b := s.c.getPiece()[:m]
		if _, err := io.ReadFull(src, b); err != nil {
			s.c.putPiece(b)
			return err
		}
		n -= m
		select {
		case s.pieces <- b:
			continue
		case <-s.done:
			s.c.putPiece(b)
			_, err := io.CopyN(io.Discard, src, int64(n))
			return err
		default:
		}
		t := time.NewTimer(s.c.ioTimeout)
		select {
		case s.pieces <- b:
			t.Stop()
		case <-s.done:
			t.Stop()
			s.c.putPiece(b)
			_, err := io.CopyN(io.Discard, src, int64(n))
			return err
		case <-t.C:
			return fmt.Errorf("a streamed read took none of its data for %v", s.c.ioTimeout)
		}
	}
	return nil
}

// readStream reads a data frame of cl, a streamed read, into its pieces.
// Called with c.mu held.
func (c *Conn) readStream(cl *call, h proto.ResponseHeader) error {
	c.mu.Unlock()
	err := cl.stream.consume(c.nc, int(h.Dlen))
	c.mu.Lock()
	final := err == nil && c.pending[h.Stream] == cl && h.Status == proto.StatusOK
	if final {
		delete(c.pending, h.Stream)
	}
	c.mu.Unlock()
	if final {
		cl.reply <- reply{status: proto.StatusOK}
	}
	return err
}

func (c *Conn) getPiece() []byte {
	if p, ok := c.pieces.Get().(*[]byte); ok {
		return (*p)[:pieceSize]
	}
	return make([]byte, pieceSize)
}

func (c *Conn) putPiece(b []byte) {
	b = b[:cap(b)]
	c.pieces.Put(&b)
}
