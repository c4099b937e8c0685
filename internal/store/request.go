package store

import (
	"context"
	"net/url"
	"strings"
	"sync/atomic"
)

// ViaKey is the CGI key a sitebox cache sets to ViaCache on what it asks
// its upstreams, so a director there does not send it to a cache again.
const (
	ViaKey   = "sbx.via"
	ViaCache = "cache"
)

// Request is what a frontend knows about the client behind a store call,
// carried in the context: stores that route (directors, caches asking
// upstream) and the auth guard need it; plain stores ignore it. It is
// the one carrier of the client's CGI, VO, address, protocol, TLS and
// identity, built by the frontend and not changed after it is in the
// context (stores share it across goroutines).
type Request struct {
	Client string     // client's IP address
	Opaque url.Values // the CGI of the request path (?vo=cms&tried=host)
	// VO is the client's virtual organisation: from its identity's groups
	// (issue 5) or an explicit ?vo=. Empty when unknown.
	VO string
	// Proto is "root" or "https": a director answers root:// clients
	// kXR_wait while a search runs, but makes https clients (which do not
	// retry a 503 by themselves) wait for the answer.
	Proto string
	// Identity is who the client's verified credential proves (a token,
	// a Kerberos ticket, an X.509 chain: Identity.Method), nil when
	// anonymous.
	Identity *Identity
	// TLS is set when the request came over an encrypted connection
	// (roots://, https://): privacy-protected namespaces require it.
	TLS bool
	// AuthError is why a credential the request carried was refused; the
	// namespace policy denies such a request with it rather than treat
	// the client as anonymous.
	AuthError error
	// CopyPeer, when set, says the call opens the local end of a
	// third-party copy: the file's bytes travel between the box and that
	// server, not over the client's connection, so protected namespaces
	// judge that leg too.
	CopyPeer *CopyPeer
}

// CopyPeer is the other server of a third-party copy.
type CopyPeer struct {
	URL string // scheme://host/path, without its query (it may hold a token)
	// TLS is set when the box reaches it encrypted (https://, davs://,
	// roots://), redirects included.
	TLS bool
}

// ClientVO is the VO a request acts for: an explicit ?vo=, else the
// first VO of the client's identity's groups.
func (r *Request) ClientVO() string {
	if r.VO != "" {
		return r.VO
	}
	if vos := r.Identity.VOs(); len(vos) > 0 {
		return vos[0]
	}
	return ""
}

// AuthzToken is the bearer token in the request's authz= CGI, as XRootD
// clients and davix send it ("Bearer%20<jwt>", decoded or not, or the
// bare token), or "".
func (r *Request) AuthzToken() string {
	v := strings.TrimSpace(r.Opaque.Get("authz"))
	if tok, ok := strings.CutPrefix(v, "Bearer%20"); ok {
		v = tok
	} else if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
		v = tok
	}
	return strings.TrimSpace(v)
}

type requestKey struct{}

type upstreamKey struct{}

// WithUpstream returns ctx carrying r as the request a proxy (the cache)
// makes of its upstream: a remote client sends r's CGI with every path it
// asks for there. It has a key of its own, not WithRequest's, so that the
// request of a client (and the token in its CGI) never travels upstream
// by accident.
func WithUpstream(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, upstreamKey{}, r)
}

// UpstreamCGI is the encoded CGI of the request WithUpstream put in ctx,
// or "".
func UpstreamCGI(ctx context.Context) string {
	if r, ok := ctx.Value(upstreamKey{}).(*Request); ok && r != nil {
		return r.Opaque.Encode()
	}
	return ""
}

// carried is what WithRequest puts in a context: the request, and the
// decision left for its next call (Leave, Take).
type carried struct {
	r    *Request
	left atomic.Pointer[left]
}

type left struct{ d any }

// WithRequest returns ctx carrying r, with nothing left for its calls.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, &carried{r: r})
}

// RequestFrom returns the request in ctx, or an empty one.
func RequestFrom(ctx context.Context) *Request {
	if c, ok := ctx.Value(requestKey{}).(*carried); ok && c.r != nil {
		return c.r
	}
	return &Request{}
}

// Leave keeps d, a decision a wrapper in the store chain made about the
// request in ctx while it was routed (the auth guard: the policy allows
// this path), for the call that follows to Take rather than decide the
// same again: one decision per operation. It replaces what was left
// before; without a request in ctx it keeps nothing. A wrapper must leave
// only what is true of the request for as long as it lasts, and match
// what it takes against the request and the call (the guard's decided).
func Leave(ctx context.Context, d any) {
	if c, ok := ctx.Value(requestKey{}).(*carried); ok {
		c.left.Store(&left{d})
	}
}

// Take removes what Leave kept for the request in ctx and returns it, or
// nil: a decision is carried to the next call that asks, never further.
func Take(ctx context.Context) any {
	c, ok := ctx.Value(requestKey{}).(*carried)
	if !ok || c.left.Load() == nil {
		return nil
	}
	if l := c.left.Swap(nil); l != nil {
		return l.d
	}
	return nil
}

// ParseOpaque parses a CGI string ("a=1&b=2", no '?') leniently: XRootD
// clients send values that are not always valid URL encoding, so a bad
// pair is kept as is rather than failing the request.
func ParseOpaque(cgi string) url.Values {
	v := url.Values{}
	for _, kv := range strings.Split(cgi, "&") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(val); err == nil {
			val = uv
		}
		v.Add(k, val)
	}
	return v
}

// NewRequest builds the request a frontend puts in the context from the
// client's address and the path's CGI.
func NewRequest(client, cgi string) *Request {
	r := &Request{Client: client, Opaque: ParseOpaque(cgi)}
	r.VO = r.Opaque.Get("vo")
	return r
}

// TransferObserver is told what the frontends move, for metrics and the
// dashboard: n bytes of path sent to (upload false) or received from the
// client of r. Implementations must be cheap and safe for concurrent use.
type TransferObserver interface {
	Transferred(r *Request, path string, upload bool, n int64)
	// Connections adds delta to the open connections of proto.
	Connections(proto string, delta int)
}
