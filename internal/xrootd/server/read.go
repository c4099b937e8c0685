package server

import (
	"errors"
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// readRange validates a read of n bytes at off and returns how many bytes
// the file actually has there (reads past the end return fewer or none).
func readRange(of *openFile, off int64, n int32) (int64, error) {
	if off < 0 {
		return 0, errorf(proto.ErrArgInvalid, "negative read offset %d", off)
	}
	if n < 0 {
		return 0, errorf(proto.ErrArgInvalid, "negative read length %d", n)
	}
	fi, err := of.f.Stat()
	if err != nil {
		return 0, err
	}
	return max(0, min(int64(n), fi.Size-off)), nil
}

func (s *session) doRead(req *proto.Request) error {
	of, err := s.files.get(req.Handle(0))
	if err != nil {
		return err
	}
	off := req.I64(4)
	avail, err := readRange(of, off, int32(req.U32(12)))
	if err != nil {
		return err
	}
	if avail == 0 {
		return s.sendOK(req.Stream, nil)
	}
	if sf, ok := of.f.(store.SendFiler); ok {
		if tc, ok := s.conn.(*net.TCPConn); ok {
			return s.sendfileRead(req.Stream, tc, sf, off, avail)
		}
	}
	return s.copyRead(req.Stream, of.f, off, avail)
}

// copyRead answers a read through a pooled buffer, in kXR_oksofar chunks.
func (s *session) copyRead(stream proto.StreamID, f store.File, off, n int64) error {
	bp := s.srv.getBuf()
	defer s.srv.putBuf(bp)
	buf := *bp
	for n > 0 {
		chunk := buf[:min(int64(len(buf)), n)]
		got, err := f.ReadAt(chunk, off)
		if got < len(chunk) {
			if err == nil || errors.Is(err, io.EOF) {
				// The file shrank since stat: send what exists and stop.
				return s.sendFrame(stream, proto.StatusOK, chunk[:got])
			}
			return err
		}
		n -= int64(got)
		off += int64(got)
		status := proto.StatusOKSoFar
		if n == 0 {
			status = proto.StatusOK
		}
		if err := s.sendFrame(stream, status, chunk); err != nil {
			return nil // connection gone; nobody to answer
		}
	}
	return nil
}

// sendfileRead moves the bytes from the file to the socket with
// sendfile(2): no copy through user space. Each chunk's header promises its
// length, so a file that shrinks underneath forces the connection closed
// rather than a short, misframed answer.
func (s *session) sendfileRead(stream proto.StreamID, tc *net.TCPConn, sf store.SendFiler, off, n int64) error {
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	infd := int(sf.Fd())
	chunkMax := int64(s.srv.cfg.MaxReadChunk) * 4 // one header per 8 MiB is plenty
	for n > 0 {
		chunk := min(chunkMax, n)
		status := proto.StatusOKSoFar
		if chunk == n {
			status = proto.StatusOK
		}
		var hdr [proto.ResponseHeaderLen]byte
		proto.PutResponseHeader(hdr[:], proto.ResponseHeader{Stream: stream, Status: status, Dlen: int32(chunk)})
		s.wmu.Lock()
		err := s.writeLocked(hdr[:])
		if err == nil {
			err = sendfile(rc, infd, off, chunk)
			if err != nil {
				s.close()
			}
		}
		s.wmu.Unlock()
		if err != nil {
			s.log.Debug("sendfile", "err", err)
			return nil
		}
		off += chunk
		n -= chunk
	}
	return nil
}

func sendfile(rc syscall.RawConn, infd int, off, n int64) error {
	var werr error
	err := rc.Write(func(outfd uintptr) bool {
		for n > 0 {
			w, err := unix.Sendfile(int(outfd), infd, &off, int(min(n, 1<<30)))
			if w > 0 {
				n -= int64(w)
			}
			switch {
			case errors.Is(err, unix.EAGAIN):
				return false // wait until the socket is writable
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				werr = err
				return true
			case w == 0:
				werr = io.ErrUnexpectedEOF // file shrank
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}
