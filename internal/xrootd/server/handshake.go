package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// handshake reads the 20-byte client hello and answers it with the
// protocol version and server type. Clients send their kXR_protocol request
// right behind the hello; the request loop reads it.
func (s *session) handshake() error {
	s.conn.SetReadDeadline(time.Now().Add(s.srv.cfg.HandshakeTimeout))
	defer s.conn.SetReadDeadline(time.Time{})
	var hs [proto.HandshakeLen]byte
	if _, err := io.ReadFull(s.br, hs[:]); err != nil {
		return fmt.Errorf("read hello: %w", err)
	}
	if binary.BigEndian.Uint32(hs[0:4]) != 0 || binary.BigEndian.Uint32(hs[4:8]) != 0 || binary.BigEndian.Uint32(hs[8:12]) != 0 ||
		binary.BigEndian.Uint32(hs[12:16]) != proto.HandshakeFourth || binary.BigEndian.Uint32(hs[16:20]) != proto.HandshakeFifth {
		return errors.New("not an XRootD client hello")
	}
	var resp [16]byte
	proto.PutResponseHeader(resp[:], proto.ResponseHeader{Dlen: proto.HandshakeRespDlen})
	binary.BigEndian.PutUint32(resp[8:], proto.ProtocolVersion)
	kind := uint32(proto.ServerTypeData)
	if s.srv.cfg.Manager {
		kind = proto.ServerTypeLBal
	}
	binary.BigEndian.PutUint32(resp[12:], kind)
	return s.write(resp[:])
}

// sessionRequest serves the requests that concern the connection rather
// than files, in order, on the reader goroutine. It reports whether req
// was one of them.
func (s *session) sessionRequest(req *proto.Request) bool {
	switch req.ID {
	case proto.ReqProtocol:
		s.doProtocol(req)
	case proto.ReqLogin:
		s.doLogin(req)
	case proto.ReqPing:
		s.sendOK(req.Stream, nil)
	case proto.ReqAuth:
		s.doAuth(req)
	case proto.ReqBind:
		s.doBind(req) // bind.go
	case proto.ReqEndsess:
		s.doEndsess(req)
	case proto.ReqSigver:
		s.sendError(req.Stream, proto.ErrUnsupported, "request signing is not configured on this server")
	default:
		return false
	}
	return true
}

// doProtocol answers kXR_protocol with the version and what this server
// is and supports. A client asking for security requirements (kXR_secreqs)
// gets the requirements structure saying "none"; bind preferences are never
// sent: substreams bind to this address (bind.go). A server with a TLS certificate says
// so (kXR_haveTLS); a client that wants TLS (roots://) is told to switch
// now (kXR_gotoTLS) and the TLS handshake follows this answer at once.
func (s *session) doProtocol(req *proto.Request) {
	var body [14]byte
	binary.BigEndian.PutUint32(body[0:4], proto.ProtocolVersion)
	flags := proto.ProtoIsServer
	if s.srv.cfg.Manager {
		flags = proto.ProtoIsManager
	}
	if !s.srv.cfg.DisablePgRW {
		flags |= proto.ProtoSupPgRW
	}
	if _, ok := store.As[store.Namespace](s.srv.store); ok {
		flags |= proto.ProtoSupPosc // see posc.go
	}
	goTLS := false
	if s.srv.cfg.TLS != nil && !s.tls {
		flags |= proto.ProtoHaveTLS
		if req.Body[4]&proto.ProtoReqWantTLS != 0 {
			flags |= proto.ProtoGotoTLS
			goTLS = true
		}
	}
	binary.BigEndian.PutUint32(body[4:8], flags)
	n := 8
	if req.Body[4]&proto.ProtoReqSecReqs != 0 {
		// theTag 'S', rsvd, secver 0, secopt 0, seclvl kXR_secNone, secvsz 0
		body[8] = 'S'
		n = 14
	}
	if err := s.sendOK(req.Stream, body[:n]); err != nil || !goTLS {
		return
	}
	if err := s.startTLS(); err != nil {
		s.log.Info("TLS handshake failed; closing", "err", err)
		s.close()
	}
}

// doLogin accepts the user and answers with the 16-byte session ID. Over
// TLS with token verification configured, the answer also lists the
// security protocols, which makes the client authenticate before anything
// else: ztn (its bearer token; XrdCl sends it only over TLS) or, for a
// client without a token, unix (anonymous). A plain connection needs no
// authentication: its tokens travel per request as authz= CGI.
func (s *session) doLogin(req *proto.Request) {
	if !s.loggedIn {
		s.loggedIn = true
		s.login = string(trimNUL(req.Body[4:12])) + "." + strconv.FormatUint(uint64(binary.BigEndian.Uint32(req.Body[0:4])), 10)
		s.log.Debug("login", "user", string(trimNUL(req.Body[4:12])), "pid", binary.BigEndian.Uint32(req.Body[0:4]), "tls", s.tls)
	}
	if sec := s.securityProtocols(); sec != "" && s.identity == nil {
		s.authNeeded = true
		s.sendOK(req.Stream, append(s.sessID[:len(s.sessID):len(s.sessID)], sec...))
		return
	}
	s.authenticated()
	s.sendOK(req.Stream, s.sessID[:])
}

// doEndsess ends an earlier session of the same client, as a reconnecting
// client asks so that the server releases the files the old connection
// held. A session of another host is not the caller's to end.
func (s *session) doEndsess(req *proto.Request) {
	var id [16]byte
	copy(id[:], req.Body[:16])
	if id == s.sessID {
		s.sendOK(req.Stream, nil)
		return
	}
	old := s.srv.findSession(id)
	if old == nil {
		s.sendError(req.Stream, proto.ErrNotFound, "session not found")
		return
	}
	if hostOf(old.conn.RemoteAddr()) != hostOf(s.conn.RemoteAddr()) {
		s.sendError(req.Stream, proto.ErrNotAuthorized, "not session owner")
		return
	}
	s.log.Debug("ending earlier session at the client's request", "old", old.conn.RemoteAddr().String())
	old.close()
	s.sendOK(req.Stream, nil)
}

// hostOf is the address a client connects from, without port.
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
