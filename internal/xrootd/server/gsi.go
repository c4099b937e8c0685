package server

import (
	"sitebox/internal/auth"
	"sitebox/internal/xrootd/proto"
)

// authGSI answers a gsi credential: the exchange takes two kXR_auth
// rounds, the first answered with kXR_authmore (the server's
// certificate and DH value), the second with kXR_ok once the client's
// key is proven and its chain verified (internal/xrootd/gsi, which hands
// the chain to the authenticator, auth.Chain). The
// exchange runs on the session's reader, like every kXR_auth: the
// client's other requests wait for it as they would for XRootD, and
// other sessions are not held up by it (its crypto waits for a slot of
// the server's gsi budget, or for the session to end). A refusal ends
// the exchange and is kept on the session as a refused token is (see
// doAuth), so a client falling back to unix learns the reason.
func (s *session) authGSI(req *proto.Request) {
	g := s.srv.cfg.GSI
	if g == nil {
		s.sendError(req.Stream, proto.ErrAuthFailed, "security protocol \"gsi\" is not offered here")
		return
	}
	if s.gsi == nil {
		s.gsi = g.Handshake()
	}
	out, err := s.gsi.Step(s.ctx, req.Data)
	switch {
	case err != nil:
		s.authErr = err
		s.log.Info("authentication failed", "protocol", "gsi", "reason", err.Error())
		s.sendError(req.Stream, proto.ErrAuthFailed, "gsi: "+err.Error())
	case out.Reply != nil:
		s.sendFrame(req.Stream, proto.StatusAuthMore, out.Reply)
	default:
		id := out.Identity
		s.identity, s.authErr = id, nil
		s.authenticated()
		s.log.Info("authenticated", append([]any{"protocol", "gsi"}, auth.LogAttrs(id)...)...)
		s.sendOK(req.Stream, nil)
	}
}
