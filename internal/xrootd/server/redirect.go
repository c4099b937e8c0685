package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

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
	if tok := r.AuthzToken(); tok != "" && s.srv.cfg.Tokens != nil {
		id, err := s.srv.cfg.Tokens.Verify(s.ctx, tok)
		if err != nil {
			r.Identity, r.AuthError = nil, err
		} else {
			r.Identity, r.AuthError = id, nil
		}
	}
	return store.WithRequest(s.ctx, r)
}

// divert turns a store's RedirectError into a kXR_redirect answer and a
// WaitError into kXR_wait. ok is false for any other error. A redirect
// that no root:// client can follow comes back as fail, to be answered
// as an ordinary error.
func divert(err error) (status uint16, body []byte, fail error, ok bool) {
	var we *store.WaitError
	if errors.As(err, &we) {
		return proto.StatusWait, waitBody(we), nil, true
	}
	var re *store.RedirectError
	if !errors.As(err, &re) {
		return 0, nil, nil, false
	}
	body, fail = redirectBody(re)
	return proto.StatusRedirect, body, fail, true
}

// waitBody is ServerResponseBody_Wait: int32 seconds, then a message. The
// protocol counts whole seconds; a shorter wait is rounded up, since 0
// would make XrdCl retry at once and spin against a busy director.
func waitBody(we *store.WaitError) []byte {
	secs := int64(math.Ceil(we.Wait.Seconds()))
	secs = min(max(secs, 1), maxWaitSecs)
	msg := we.Reason
	if msg == "" {
		msg = we.Error()
	}
	b := make([]byte, 4, 4+len(msg))
	binary.BigEndian.PutUint32(b, uint32(secs))
	return append(b, msg...)
}

// redirectBody is ServerResponseBody_Redirect: int32 port, then the host
// with "?opaque" appended, no NUL (XRootD sends strlen bytes; XrdCl
// splits the text at '?' and merges the CGI into the resent request's
// path). The first endpoint with a usable root:// address wins.
func redirectBody(re *store.RedirectError) ([]byte, error) {
	opaque := strings.TrimLeft(re.Opaque, "?&")
	if bad := strings.IndexFunc(opaque, func(r rune) bool { return r <= ' ' || r == 0x7f }); bad >= 0 {
		return nil, errorf(proto.ErrServerError, "%s %s: redirect refused: its CGI holds a blank or control character", re.Op, re.Path)
	}
	var skipped []string
	for _, ep := range re.To {
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
		return nil, errorf(proto.ErrServerError, "%s %s: redirect without any destination", re.Op, re.Path)
	}
	return nil, errorf(proto.ErrServerError, "%s %s: only reachable at %s, which a root:// client cannot follow (no root:// endpoint)", re.Op, re.Path, strings.Join(skipped, ", "))
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
