package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxStatusInfo bounds the status body and info of one kXR_status frame
// (a pgread's is 24 bytes): more is a broken server.
const maxStatusInfo = 4096

// pgReadAt is ReadAtContext with kXR_pgread: every 4 KiB page arrives
// with its CRC32C, computed where the data is kept (the server's disk or
// cache), and is checked before the read returns, so a byte altered on
// the way (or on a cache's disk) fails the read with store.ErrIO instead
// of reaching the caller.
func (f *File) pgReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	n := 0
	w := f.waiter()
	for n < len(p) {
		want := min(len(p)-n, maxIO)
		var body [16]byte
		at := off + int64(n)
		binary.BigEndian.PutUint64(body[4:12], uint64(at))
		binary.BigEndian.PutUint32(body[12:16], uint32(want))
		c, h := f.at()
		handleAt(&body, h)
		pg := &pgSink{dst: p[n : n+want], base: at, next: at}
		began := time.Now()
		_, err := c.do(ctx, w, proto.ReqPgread, body, nil, nil, pg)
		if err != nil && f.recover(ctx, w, c, err, began) == nil {
			continue // opened again: the same read on the new handle
		}
		if err == nil {
			err = pg.result()
		}
		if err == nil && !pg.final {
			// A plain kXR_ok: bytes without checksums are no answer here.
			err = fmt.Errorf("%w: %s answered kXR_pgread without page checksums", store.ErrIO, c.addr)
		}
		if err != nil {
			return n, pathOp("pgread", f.name, err)
		}
		got := int(pg.next - at)
		n += got
		if got < want {
			return n, io.EOF
		}
	}
	return n, nil
}

// pgSink takes a kXR_pgread answer apart as it arrives: each frame's
// pages, each behind its CRC32C, go straight into the caller's buffer
// and are checked there. Frames must come in order, each starting where
// the last ended; the first mismatch is kept and the rest of the answer
// is read and dropped.
type pgSink struct {
	dst  []byte
	base int64 // file offset of dst[0]
	next int64 // file offset of the next byte expected
	err  error
	// final is set by the reader once the last kXR_status frame is in,
	// before the call is answered.
	final bool
}

// frame reads a frame's n data bytes (CRCs and pages) from r; off is the
// file offset of its first page, from the frame's info.
func (s *pgSink) frame(r io.Reader, off int64, n int) error {
	if s.err == nil && off != s.next {
		s.err = fmt.Errorf("%w: pgread frame at offset %d, expected %d", store.ErrIO, off, s.next)
	}
	var crc [4]byte
	for n > 0 {
		if s.err != nil {
			_, err := io.CopyN(io.Discard, r, int64(n))
			return err
		}
		if n <= 4 {
			s.err = fmt.Errorf("%w: pgread frame ends inside a page's checksum", store.ErrIO)
			continue
		}
		if _, err := io.ReadFull(r, crc[:]); err != nil {
			return err
		}
		n -= 4
		pl := min(proto.PgPageSize-int(s.next%proto.PgPageSize), n)
		at := int(s.next - s.base)
		if at+pl > len(s.dst) {
			s.err = fmt.Errorf("%w: pgread answered more bytes than asked", store.ErrIO)
			continue
		}
		page := s.dst[at : at+pl]
		if _, err := io.ReadFull(r, page); err != nil {
			return err
		}
		n -= pl
		if got, want := proto.CRC32C(page), binary.BigEndian.Uint32(crc[:]); got != want {
			s.err = fmt.Errorf("%w: pgread: CRC32C mismatch in the page at offset %d (%d bytes): computed %08x, the server sent %08x; the data was altered on the way or where it is kept", store.ErrIO, s.next, pl, got, want)
			continue
		}
		s.next += int64(pl)
	}
	return nil
}

// result is the error of a complete answer.
func (s *pgSink) result() error { return s.err }

// readStatus reads a kXR_status frame: its status body and info (checked
// against their CRC), then the data that follows them on the wire, which
// the header's length does not count. A pgread's pages go to its sink;
// the final frame answers the call.
func (c *Conn) readStatus(h proto.ResponseHeader) error {
	if h.Dlen > maxStatusInfo {
		return fmt.Errorf("kXR_status of %d bytes before its data", h.Dlen)
	}
	b, err := proto.ReadResponseBody(c.nc, make([]byte, h.Dlen))
	if err != nil {
		return err
	}
	st, info, err := proto.ParseStatus(b)
	if err != nil {
		return err // the stream cannot be trusted past a bad frame
	}
	if st.DataLen < 0 || st.DataLen > maxResponse {
		return fmt.Errorf("kXR_status announces %d data bytes", st.DataLen)
	}
	c.mu.Lock()
	cl := c.pending[h.Stream]
	if cl == nil || cl.pg == nil || st.ReqID != proto.ReqPgread || len(info) < 8 {
		c.mu.Unlock()
		if _, err := io.CopyN(io.Discard, c.nc, int64(st.DataLen)); err != nil {
			return err
		}
		if cl != nil {
			c.finish(h.Stream, cl, reply{err: fmt.Errorf("%w: %s answered %s with an unexpected kXR_status", store.ErrIO, c.addr, proto.RequestName(st.ReqID))})
		}
		return nil
	}
	// As readInto: the caller's buffer is filled outside mu, and a caller
	// that gives up waits on fillMu before reusing it.
	c.fillMu.Lock()
	c.filling = cl
	c.mu.Unlock()
	err = cl.pg.frame(c.nc, int64(binary.BigEndian.Uint64(info[:8])), int(st.DataLen))
	c.mu.Lock()
	c.filling = nil
	c.fillMu.Unlock()
	c.mu.Unlock()
	if err == nil && st.RespType == proto.RespFinal {
		cl.pg.final = true
		c.finish(h.Stream, cl, reply{status: proto.StatusOK})
	}
	return err
}

// finish answers cl if it is still waiting on stream.
func (c *Conn) finish(stream proto.StreamID, cl *call, r reply) {
	c.mu.Lock()
	current := c.pending[stream] == cl
	if current {
		delete(c.pending, stream)
	}
	c.mu.Unlock()
	if current {
		cl.reply <- r
	}
}
