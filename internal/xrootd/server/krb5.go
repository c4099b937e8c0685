package server

import (
	"bytes"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// KerberosVerifier checks the credentials of XRootD's krb5 security
// protocol (a Kerberos AP-REQ) and maps them to a local identity.
type KerberosVerifier interface {
	// Principal is the service principal announced to clients for svc
	// ("xrootd"), "" if none.
	Principal(svc string) string
	// VerifyAPReq checks an AP-REQ addressed to a principal of svc; the
	// error says why it is refused.
	VerifyAPReq(raw []byte, svc string) (*store.Identity, error)
}

// krb5Service is the first component of the service principals root://
// clients ask their KDC a ticket for.
const krb5Service = "xrootd"

// authKrb5 answers a krb5 credential: "krb5\0" and the AP-REQ (XrdSeckrb5
// sends no more unless the server asks for a forwarded ticket, which
// sitebox never does). A refusal is kept on the session as a refused
// ztn token is (see doAuth), so the client learns its reason.
func (s *session) authKrb5(req *proto.Request) {
	k := s.srv.cfg.Kerberos
	if k == nil {
		s.sendError(req.Stream, proto.ErrAuthFailed, "security protocol \"krb5\" is not offered here")
		return
	}
	raw, ok := bytes.CutPrefix(req.Data, []byte("krb5\x00"))
	var err error
	var id *store.Identity
	if !ok || len(raw) == 0 {
		err = errMalformedKrb5
	} else if id, err = k.VerifyAPReq(raw, krb5Service); err == nil {
		s.identity, s.authErr = id, nil
		s.authenticated()
		s.log.Info("authenticated", "protocol", "krb5", "issuer", id.Issuer, "subject", id.Subject, "groups", id.Groups)
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
