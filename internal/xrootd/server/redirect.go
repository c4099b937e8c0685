package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxWaitSecs caps the kXR_wait we send: a director asking for longer
// than this is asking the client to give up, and XrdCl adds every wait to
// its total anyway.
const maxWaitSecs = 600

// reqCtx is the context for a store call about a path: the session's,
// carrying who asks and the path's CGI, which routing stores (directors,
// caches asking upstream) decide by.
// A token in authz= CGI takes the place of the session's for this request;
// one that fails verification is kept as the request's AuthError, so the
// namespace policy refuses the request with the reason, as is a ztn token
// the session's kXR_auth refused (see doAuth).
func (s *session) reqCtx(cgi string) context.Context {
	r := store.NewRequest(s.clientIP, cgi)
	r.Proto = "root"
	r.TLS = s.tls
	r.Identity, r.AuthError = s.identity, s.authErr
	if tok := r.AuthzToken(); tok != "" && s.srv.cfg.Auth.Takes(auth.MethodToken) {
		id, err := s.srv.cfg.Auth.Authenticate(s.ctx, auth.Token(tok))
		if err != nil {
			r.Identity, r.AuthError = nil, err
		} else {
			r.Identity, r.AuthError = id, nil
		}
	}
	return store.WithRequest(s.ctx, r)
}

// routed asks the store where c is served and, unless here, answers req
// itself: kXR_redirect to the route's first root:// endpoint, or kXR_wait.
// done reports that it answered; err is the call's own answer (found
// nowhere, a redirect loop, a redirect no root:// client can follow).
func (s *session) routed(ctx context.Context, req *proto.Request, c store.Call) (done bool, err error) {
	rt, err := store.RouteOf(ctx, s.srv.store, c)
	if err != nil || rt.Here() {
		return false, err
	}
	status, body := uint16(proto.StatusWait), waitBody(rt, c)
	if !rt.Retry {
		if body, err = redirectBody(rt, c); err != nil {
			return false, err
		}
		status = proto.StatusRedirect
	}
	if s.log.Enabled(ctx, slog.LevelDebug) { // every redirect passes here: no text built for nothing
		s.log.Debug("request diverted", "req", req.Name(), "status", status, "why", rt.Describe(c))
	}
	return true, s.sendFrame(req.Stream, status, body)
}

// waitBody is ServerResponseBody_Wait: int32 seconds, then a message. The
// protocol counts whole seconds; a shorter wait is rounded up, since 0
// would make XrdCl retry at once and spin against a busy director.
func waitBody(rt store.Route, c store.Call) []byte {
	secs := int64(math.Ceil(rt.Wait.Seconds()))
	secs = min(max(secs, 1), maxWaitSecs)
	msg := rt.Reason
	if msg == "" {
		msg = rt.Describe(c)
	}
	b := make([]byte, 4, 4+len(msg))
	binary.BigEndian.PutUint32(b, uint32(secs))
	return append(b, msg...)
}

// redirectBody is ServerResponseBody_Redirect: int32 port, then the host
// with "?opaque" appended, no NUL (XRootD sends strlen bytes; XrdCl
// splits the text at '?' and merges the CGI into the resent request's
// path). The first endpoint with a usable root:// address wins.
func redirectBody(rt store.Route, c store.Call) ([]byte, error) {
	opaque := strings.TrimLeft(rt.Opaque, "?&")
	if bad := strings.IndexFunc(opaque, func(r rune) bool { return r <= ' ' || r == 0x7f }); bad >= 0 {
		return nil, errorf(proto.ErrServerError, "%s %s: redirect refused: its CGI holds a blank or control character", c.Op, c.Path)
	}
	var skipped []string
	for _, ep := range rt.To {
		if ep.Root == "" {
			if ep.HTTPS != "" {
				skipped = append(skipped, ep.HTTPS)
			}
			continue
		}
		host, port, err := rootHostPort(ep.Root)
		if err != nil {
			skipped = append(skipped, ep.Root+" ("+err.Error()+")")
			continue
		}
		b := make([]byte, 4, 4+len(host)+1+len(opaque))
		binary.BigEndian.PutUint32(b, uint32(port))
		b = append(b, host...)
		if opaque != "" {
			b = append(b, '?')
			b = append(b, opaque...)
		}
		return b, nil
	}
	if len(skipped) == 0 {
		return nil, errorf(proto.ErrServerError, "%s %s: redirect without any destination", c.Op, c.Path)
	}
	return nil, errorf(proto.ErrServerError, "%s %s: only reachable at %s, which a root:// client cannot follow (no root:// endpoint)", c.Op, c.Path, strings.Join(skipped, ", "))
}

// rootHostPort splits a root:// endpoint ("host:port", tolerating a
// "root://" prefix and a trailing "/") into the host as XrdCl parses it
// in a URL (IPv6 in brackets) and the port.
func rootHostPort(root string) (string, int, error) {
	for _, scheme := range []string{"root://", "xroot://"} {
		root = strings.TrimPrefix(root, scheme)
	}
	root = strings.TrimRight(root, "/")
	h, p, err := net.SplitHostPort(root)
	if err != nil {
		return "", 0, fmt.Errorf("not host:port: %w", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	if h == "" || strings.ContainsFunc(h, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '?' || r == '/' }) {
		return "", 0, fmt.Errorf("bad host %q", h)
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h, port, nil
}

// joinCGI joins two CGI strings ("a=1", "b=2") into one.
func joinCGI(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "&" + b
}
