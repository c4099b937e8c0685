package server

import (
	"bytes"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// krb5Service is the first component of the service principals root://
// clients ask their KDC a ticket for.
const krb5Service = "xrootd"

// authKrb5 answers a krb5 credential: "krb5\0" and the AP-REQ (XrdSeckrb5
// sends no more unless the server asks for a forwarded ticket, which
// sitebox never does), which the authenticator verifies. A refusal is kept on the session as a refused
// ztn token is (see doAuth), so the client learns its reason.
func (s *session) authKrb5(req *proto.Request) {
	a := s.srv.cfg.Auth
	if !a.Takes(auth.MethodKrb5) {
		s.sendError(req.Stream, proto.ErrAuthFailed, "security protocol \"krb5\" is not offered here")
		return
	}
	raw, ok := bytes.CutPrefix(req.Data, []byte("krb5\x00"))
	var err error
	var id *store.Identity
	if !ok || len(raw) == 0 {
		err = errMalformedKrb5
	} else if id, err = a.Authenticate(s.ctx, auth.KerberosTicket{APReq: raw, Service: krb5Service}); err == nil {
		s.identity, s.authErr = id, nil
		s.authenticated()
		s.log.Info("authenticated", append([]any{"protocol", "krb5"}, auth.LogAttrs(id)...)...)
		s.sendOK(req.Stream, nil)
		return
	}
	s.authErr = err
	s.log.Info("authentication failed", "protocol", "krb5", "reason", err.Error())
	s.sendError(req.Stream, proto.ErrAuthFailed, "krb5: "+err.Error())
}

type krb5Error string

func (e krb5Error) Error() string { return string(e) }

const errMalformedKrb5 = krb5Error("malformed credential: want \"krb5\\0\" and a Kerberos AP-REQ")
