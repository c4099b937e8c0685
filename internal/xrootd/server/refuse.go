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
// why: it answers the handshake, kXR_protocol and kXR_login as usual —
// XrdCl reports any error during those only as "invalid login response" —
// and the first request after them with the limit's error, then closes.
// At most maxRefusing connections are refused this way at once, each for
// at most refuseTimeout.
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
		switch req.ID {
		case proto.ReqProtocol:
			s.doProtocol(&req)
		case proto.ReqLogin:
			// No security protocols offered: the refusal comes next anyway.
			s.loggedIn = true
			s.sendOK(req.Stream, s.sessID[:])
		default:
			s.sendError(req.Stream, code, msg)
			return
		}
	}
}
