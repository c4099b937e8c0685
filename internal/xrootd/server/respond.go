package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"sitebox/internal/auth"
	"sitebox/internal/nbio"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// write sends byte slices as one unit under the write lock.
func (s *session) write(parts ...[]byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(parts)
}

// writeLocked sends parts with writev; the caller holds wmu. A failed or
// partial write closes the session: the stream cannot be resynchronised
// after half a frame.
func (s *session) writeLocked(parts [][]byte) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("send response: %w", net.ErrClosed)
	}
	timeout := s.srv.cfg.WriteTimeout.D()
	s.writeDL.within(timeout)
	var err error
	if s.tlsw != nil {
		// TLS has no writev: each part would be a record of its own (an
		// 8-byte header, every 4-byte pgread CRC). Gather them instead.
		for _, p := range parts {
			if _, err = s.tlsw.Write(p); err != nil {
				break
			}
		}
		if err == nil {
			err = s.tlsw.Flush()
		}
		if err == nil {
			err = s.batch.flush()
		}
	} else if s.plain != nil && partsLen(parts) <= nbio.MaxQuick {
		// The deadline bounds the time without progress: a slow client
		// gets the whole frame as long as it keeps taking some of it.
		err = nbio.Writev(s.plain, parts, func() { s.writeDL.within(timeout) })
	} else {
		// As above (WriteTo consumes bufs as it goes, so a retry
		// continues).
		bufs := net.Buffers(parts)
		for {
			var n int64
			n, err = bufs.WriteTo(s.conn)
			if ne := net.Error(nil); n > 0 && errors.As(err, &ne) && ne.Timeout() {
				s.writeDL.within(timeout)
				continue
			}
			break
		}
	}
	if err != nil {
		s.close()
		return fmt.Errorf("send response: %w", err)
	}
	return nil
}

// sendFrame writes one response frame: the header, then the body parts.
func (s *session) sendFrame(stream proto.StreamID, status uint16, parts ...[]byte) error {
	var arr [5][]byte
	return s.sendFrameParts(stream, status, append(arr[:1], parts...))
}

// sendFrameParts sends parts[1:] as one frame; parts[0] is overwritten
// with the frame's header.
func (s *session) sendFrameParts(stream proto.StreamID, status uint16, parts [][]byte) error {
	var hdr [proto.ResponseHeaderLen]byte
	proto.PutResponseHeader(hdr[:], proto.ResponseHeader{Stream: stream, Status: status, Dlen: int32(partsLen(parts[1:]))})
	parts[0] = hdr[:]
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(parts)
}

func (s *session) sendOK(stream proto.StreamID, body []byte) error {
	if len(body) == 0 {
		return s.sendFrame(stream, proto.StatusOK)
	}
	return s.sendFrame(stream, proto.StatusOK, body)
}

// sendString answers with a NUL-terminated string, as XRootD does for
// stat, checksum and locate answers.
func (s *session) sendString(stream proto.StreamID, str string) error {
	return s.sendFrame(stream, proto.StatusOK, []byte(str), []byte{0})
}

// sendError answers with kXR_error: the code and the message,
// NUL-terminated as XRootD sends it. XrdCl from 5.6.4 on drops the last
// byte of the text as the terminator, so without it every message would
// lose its last character ("file does not exis").
func (s *session) sendError(stream proto.StreamID, code int32, msg string) error {
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], uint32(code))
	return s.sendFrame(stream, proto.StatusError, c[:], []byte(msg), []byte{0})
}

// partsLen is the total length of parts.
func partsLen(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// replyErr answers a failed request with its kXR error code. (A store
// sending the client elsewhere is not a failure: see routed.)
func (s *session) replyErr(req *proto.Request, err error) {
	code, msg := toXrd(err)
	if code == proto.ErrNotAuthorized && !s.tls && s.srv.cfg.Auth.Takes(auth.MethodToken) && s.srv.cfg.TLS != nil && errors.Is(err, store.ErrNoToken) {
		// XrdCl sends BEARER_TOKEN only over TLS: say so.
		msg += "; root:// carries no token: use roots:// (or ?authz= on the path)"
	}
	if code == proto.ErrServerError || code == proto.ErrIOError {
		s.log.Warn("request failed", "req", req.Name(), "code", code, "err", msg)
	} else {
		s.log.Debug("request failed", "req", req.Name(), "code", code, "err", msg)
	}
	s.sendError(req.Stream, code, msg)
}
