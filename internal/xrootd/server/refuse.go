package server

import (
	"io"
	"time"

	"sitebox/internal/xrootd/proto"
)

// refuseTimeout bounds the life of a connection that is only told it is
// over a limit.
const refuseTimeout = 10 * time.Second

// refuse serves a session over a limit just far enough to tell the client
// why: it answers the handshake and kXR_protocol as usual (clients send
// both before they can read an error) and the next request — the login —
// with the limit's error, then closes. At most maxRefusing connections
// are refused this way at once, each for at most refuseTimeout.
func (s *session) refuse() {
	deadline := time.Now().Add(min(s.srv.cfg.HandshakeTimeout, refuseTimeout))
	s.raw.SetDeadline(deadline)
	if err := s.handshake(); err != nil {
		return
	}
	code, msg := toXrd(s.refusal)
	var hdr [proto.RequestHeaderLen]byte
	for range 4 {
		s.conn.SetDeadline(deadline) // handshake and TLS clear theirs
		if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
			return
		}
		req, dlen := proto.DecodeRequestHeader(hdr[:])
		if dlen < 0 || dlen > maxArgLen {
			return
		}
		if dlen > 0 {
			req.Data = make([]byte, dlen)
			if _, err := io.ReadFull(s.br, req.Data); err != nil {
				return
			}
		}
		if req.ID != proto.ReqProtocol {
			s.sendError(req.Stream, code, msg)
			return
		}
		s.doProtocol(&req)
	}
}
