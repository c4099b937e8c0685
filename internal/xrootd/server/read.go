package server

import (
	"errors"
	"io"
	"net"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// readArgs validates the handle, offset and length shared by kXR_read and
// kXR_pgread and returns the file with a reference held.
func (s *session) readArgs(req *proto.Request) (*openFile, int64, int64, error) {
	off := req.I64(4)
	rlen := int32(req.U32(12))
	if off < 0 {
		return nil, 0, 0, errorf(proto.ErrArgInvalid, "%s offset %d is negative", req.Name(), off)
	}
	if rlen < 0 {
		return nil, 0, 0, errorf(proto.ErrArgInvalid, "%s length %d is negative", req.Name(), rlen)
	}
	of, err := s.files.acquire(req.Handle(0))
	if err != nil {
		return nil, 0, 0, err
	}
	return of, off, int64(rlen), nil
}

// doRead answers kXR_read: up to rlen bytes at offset, fewer at the end of
// the file, none past it. Big answers go out as several frames, all but the
// last as kXR_oksofar. With a descriptor and a TCP socket the bytes move
// with sendfile(2) and never enter user space; otherwise they pass through
// a pooled buffer, MaxReadChunk at a time.
func (s *session) doRead(req *proto.Request) error {
	of, off, rlen, err := s.readArgs(req)
	if err != nil {
		return err
	}
	defer of.release()
	if err := s.plainRefused("read", of); err != nil {
		return err
	}
	if rlen == 0 {
		return s.sendOK(req.Stream, nil)
	}
	if tc, ok := s.conn.(*net.TCPConn); ok && of.fd >= 0 && sendfileOK {
		fi, err := of.f.Stat()
		if err != nil {
			return err
		}
		n := min(rlen, max(fi.Size-off, 0))
		return s.readSendfile(req.Stream, tc, of, off, n)
	}
	return s.readBuffered(req.Stream, of, off, rlen)
}

// sendfileFrame is the largest frame sent with sendfile. Such frames take
// no buffer, so they can be bigger than MaxReadChunk: xrdcp's 8 MiB chunk
// reads then go out as one frame each, as XRootD sends them, which spares
// the client work per frame.
const sendfileFrame = 8 << 20

// readSendfile sends n bytes at off (n already clipped to the file size).
func (s *session) readSendfile(stream proto.StreamID, tc *net.TCPConn, of *openFile, off, n int64) error {
	if n == 0 {
		return s.sendOK(stream, nil)
	}
	chunk := int64(max(s.srv.cfg.MaxReadChunk, sendfileFrame))
	for n > 0 {
		m := min(n, chunk)
		status := proto.StatusOKSoFar
		if m == n {
			status = proto.StatusOK
		}
		var hdr [proto.ResponseHeaderLen]byte
		proto.PutResponseHeader(hdr[:], proto.ResponseHeader{Stream: stream, Status: status, Dlen: int32(m)})
		if err := s.sendfileFrame(tc, hdr[:], of.fd, off, int(m)); err != nil {
			return err
		}
		s.moved(of, false, int(m))
		off += m
		n -= m
	}
	return nil
}

// sendfileFrame writes one frame from the file under the write lock.
func (s *session) sendfileFrame(tc *net.TCPConn, hdr []byte, fd int, off int64, n int) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if err := sendfile(tc, func() { s.writeDL.within(s.srv.cfg.WriteTimeout.D()) }, hdr, fd, off, n); err != nil {
		// The header promised n bytes: nothing else may follow a short frame.
		s.close()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			s.log.Warn("file shrank while being sent; closing the connection", "err", err)
		}
		return err
	}
	return nil
}

// What a file lends (store.Lender) is checked in one place before it
// is framed: a frame promises its length, and a loan of no bytes short
// of the file's end would not move an answer on (the same bytes asked
// for again forever). No lender should make such a loan, nor one longer
// than asked; one that does is given back and the bytes are read
// instead.

// dataFrame is one frame's bytes (a read's or a pgread's): sums are their
// pgread CRCs when the file gave them (else nil: computed from the
// bytes), eof says the file ends with them, and loan is given back after
// the write.
type dataFrame struct {
	data []byte
	sums []uint32
	eof  bool
	loan store.Loan
}

// lendFrame asks l once for up to len(buf) bytes at off, as opts allow,
// and makes the answer a frame; a loan that cannot be framed is given
// back and the bytes read from f into buf.
func lendFrame(l store.Lender, f store.File, off int64, buf []byte, opts store.LendOptions) (dataFrame, error) {
	loan, err := l.Lend(off, buf, opts)
	eof := errors.Is(err, io.EOF)
	if err != nil && !eof {
		loan.Release()
		return dataFrame{}, err
	}
	n := len(loan.Bytes)
	if n <= len(buf) && (n > 0 || eof) {
		sums := loan.CRCs
		if len(sums) < pgPages(off, n) {
			sums = nil // computed from the bytes
		}
		return dataFrame{data: loan.Bytes, sums: sums, eof: eof, loan: loan}, nil
	}
	loan.Release()
	n, err = f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return dataFrame{}, err
	}
	return dataFrame{data: buf[:n], eof: n < len(buf)}, nil
}

// pgPages is how many pgread pages n bytes at off have.
func pgPages(off int64, n int) int {
	if n <= 0 {
		return 0
	}
	return int((off+int64(n)-1)/proto.PgPageSize - off/proto.PgPageSize + 1)
}

// readBuffered sends the answer one chunk per frame: bytes the file lends
// (its own buffers, or pages in the page cache: one copy, into the
// socket, instead of two) or else reads into a pooled buffer. The frame
// length is what was actually read, so a file shrinking meanwhile just
// ends the answer early.
func (s *session) readBuffered(stream proto.StreamID, of *openFile, off, rlen int64) error {
	buf, err := s.getBuf()
	if err != nil {
		return err
	}
	defer buf.release()
	lender := store.LenderOf(of.f)
	// Mapped pages may only reach the kernel: not a TLS connection (see
	// sendReadv).
	opts := store.LendOptions{Mapped: s.plain != nil && s.tlsw == nil}
	for {
		want := min(rlen, int64(len(buf.b)))
		fr, err := lendFrame(lender, of.f, off, buf.b[:want], opts)
		if err != nil {
			return err
		}
		n := int64(len(fr.data))
		// Lent bytes may stop short of want where the lender's buffer
		// ends; only the file's end ends the answer.
		final := fr.eof || n == rlen
		status := proto.StatusOKSoFar
		if final {
			status = proto.StatusOK
		}
		if n == 0 {
			err = s.sendFrame(stream, status)
		} else {
			err = s.sendFrame(stream, status, fr.data)
		}
		fr.loan.Release()
		if err != nil {
			return err
		}
		s.moved(of, false, int(n))
		if final {
			return nil
		}
		rlen -= n
		off += n
	}
}
