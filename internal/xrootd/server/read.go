package server

import (
	"errors"
	"io"
	"net"

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
	if err := sendfile(tc, func() { s.writeDL.within(s.srv.cfg.WriteTimeout) }, hdr, fd, off, n); err != nil {
		// The header promised n bytes: nothing else may follow a short frame.
		s.close()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			s.log.Warn("file shrank while being sent; closing the connection", "err", err)
		}
		return err
	}
	return nil
}

// readBuffered reads through a pooled buffer, one chunk per frame. The
// frame length is what was actually read, so a file shrinking meanwhile
// just ends the answer early.
func (s *session) readBuffered(stream proto.StreamID, of *openFile, off, rlen int64) error {
	buf, err := s.getBuf()
	if err != nil {
		return err
	}
	defer buf.release()
	for {
		want := min(rlen, int64(len(buf.b)))
		n, err := of.f.ReadAt(buf.b[:want], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		rlen -= int64(n)
		off += int64(n)
		if rlen == 0 || int64(n) < want {
			err := s.sendOK(stream, buf.b[:n])
			if err == nil {
				s.moved(of, false, n)
			}
			return err
		}
		if err := s.sendFrame(stream, proto.StatusOKSoFar, buf.b[:n]); err != nil {
			return err
		}
		s.moved(of, false, n)
	}
}
