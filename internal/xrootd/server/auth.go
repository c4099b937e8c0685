package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxTokenLen is the largest token accepted through ztn, announced in the
// login answer as XRootD does ("&P=ztn,0:<max>:"); longer ones are refused
// before they are parsed.
const maxTokenLen = 16 << 10

// doAuth answers kXR_auth. Without token verification, Kerberos or gsi
// configured every credential is accepted, as XRootD does with no
// security layer. Otherwise "ztn" carries a bearer token (verified: the
// session acts for it), "krb5" a Kerberos ticket (krb5.go), "gsi" one
// step of the X.509 proxy exchange (gsi.go), and "unix" is the anonymous
// fallback XrdCl takes when it has none of them.
//
// XrdCl answers a refused ztn (krb5, gsi) by trying the next protocol the
// login offered (unix), and shows the refusal only in its debug log; its
// user would then read "no token" from the first request that needs one.
// So the refusal is kept on the session (authErr) and every request of
// the session is refused with it, as a refused authz= token is.
func (s *session) doAuth(req *proto.Request) {
	credType := string(trimNUL(req.Body[12:16]))
	a := s.srv.cfg.Auth
	if !a.Takes(auth.MethodToken) && !a.Takes(auth.MethodKrb5) && s.srv.cfg.GSI == nil || !s.authNeeded {
		s.sendOK(req.Stream, nil)
		return
	}
	switch credType {
	case "unix":
		s.authenticated()
		if s.authErr != nil {
			s.log.Debug("anonymous after a refused token: its requests are refused with the token's reason", "protocol", "unix", "reason", s.authErr.Error())
		} else {
			s.log.Debug("authenticated", "protocol", "unix", "identity", "anonymous")
		}
		s.sendOK(req.Stream, nil)
	case "krb5":
		s.authKrb5(req)
	case "gsi":
		s.authGSI(req)
	case "ztn":
		if !s.srv.cfg.Auth.Takes(auth.MethodToken) {
			s.sendError(req.Stream, proto.ErrAuthFailed, "security protocol \"ztn\" is not offered here")
			return
		}
		tok, err := parseZTN(req.Data)
		if err == nil {
			var id *store.Identity
			if id, err = s.srv.cfg.Auth.Authenticate(s.ctx, auth.Token(tok)); err == nil {
				s.identity, s.authErr = id, nil
				s.authenticated()
				s.log.Debug("authenticated", append([]any{"protocol", "ztn"}, auth.LogAttrs(id)...)...)
				s.sendOK(req.Stream, nil)
				return
			}
		}
		s.authErr = err
		s.log.Info("authentication failed", "protocol", "ztn", "reason", err.Error())
		s.sendError(req.Stream, proto.ErrAuthFailed, "ztn: "+err.Error())
	default:
		s.sendError(req.Stream, proto.ErrAuthFailed, fmt.Sprintf("security protocol %q is not supported (use ztn with a bearer token, krb5 or gsi where offered, or unix)", credType))
	}
}

// securityProtocols is the login answer's list of security protocols,
// "" when the client need not authenticate: ztn over TLS when tokens are
// verified, krb5 with the service principal when Kerberos is configured
// (plain or TLS: the AP-REQ is safe to send in clear), gsi with the host
// certificate's CA when X.509 proxies are taken (plain or TLS: the
// exchange agrees a key of its own), and unix, the anonymous fallback
// XrdCl takes when it has none of them. XrdCl tries them in this order,
// skipping those it has no credential for.
func (s *session) securityProtocols() string {
	var b bytes.Buffer
	if s.tls && s.srv.cfg.Auth.Takes(auth.MethodToken) {
		b.WriteString("&P=ztn,0:" + strconv.Itoa(maxTokenLen) + ":")
	}
	if p := s.srv.cfg.Auth.KerberosPrincipal(krb5Service); p != "" {
		b.WriteString("&P=krb5," + p)
	}
	if g := s.srv.cfg.GSI; g != nil {
		b.WriteString("&P=" + g.Offer())
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString("&P=unix")
	return b.String()
}

// parseZTN extracts the token from a ztn credential: "ztn\0", version 0,
// 'T', two reserved bytes, a big-endian length counting the token and its
// NUL, the token, the NUL (and XrdCl's padding, ignored).
func parseZTN(b []byte) (string, error) {
	switch {
	case len(b) < 10 || !bytes.Equal(b[:4], []byte("ztn\x00")):
		return "", fmt.Errorf("malformed credential (%d bytes, not a ztn header)", len(b))
	case b[4] != 0:
		return "", fmt.Errorf("credential version %d is not supported", b[4])
	case b[5] != 'T':
		return "", fmt.Errorf("operation %q is not supported (only a token, 'T')", b[5])
	}
	n := int(binary.BigEndian.Uint16(b[8:10]))
	if n < 2 || 10+n > len(b) {
		return "", fmt.Errorf("token length %d does not fit the %d-byte credential", n, len(b))
	}
	if n-1 > maxTokenLen {
		return "", fmt.Errorf("token of %d bytes is over the %d-byte limit", n-1, maxTokenLen)
	}
	if b[10+n-1] != 0 {
		return "", fmt.Errorf("token is not NUL-terminated")
	}
	return strings.TrimSpace(string(b[10 : 10+n-1])), nil
}
