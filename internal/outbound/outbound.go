// Package outbound holds what every sitebox client (the root:// one, the
// https:// one and remote, which picks between them by URL) is told about
// the servers it reaches beyond their address: the credentials it presents,
// the CAs it trusts, the redirects it follows, how it connects and how long
// it waits. The three embed Options, so each field means the same
// everywhere and remote hands it on whole.
package outbound

import (
	"cmp"
	"context"
	"crypto/x509"
	"net"
	"time"

	"sitebox/internal/x509grid"
)

// DefaultMaxWait is the time one operation spends honouring a server's
// "wait" (kXR_wait, 503 + Retry-After) when Options.MaxWait is zero: a
// director still searching asks for a second or two at a time, while one
// that keeps asking for a minute is not going to answer.
const DefaultMaxWait = 60 * time.Second

// Options say how a client treats the servers it reaches. The zero value
// reads anonymously, verifies certificates against the system roots and
// follows every redirect.
type Options struct {
	// Token is a bearer token (WLCG, SciTokens): sent to http(s) servers
	// as Authorization (and to the hosts they redirect to as RedirectTo
	// says), and only over TLS to XRootD servers (ztn on roots://,
	// xroots://, when their login asks for it), never in clear.
	Token string
	// TokenFunc, when set, gives the token each time one is needed
	// instead (a long-lived client picks up a renewed token).
	TokenFunc func() string
	// Proxy, when set, gives the X.509 proxy presented to servers that
	// ask for one: with gsi on root:// and roots:// (gsi protects the
	// key itself, so over root:// too), as the TLS client certificate on
	// https:// (XrdHttp, dCache, StoRM). It goes to the server and to the
	// hosts RedirectTo accepts. It is asked again for each connection
	// (each request on https://), so a proxy renewed on disk
	// (x509grid.CredentialFile) is used from then on; its error is
	// reported when a server needs the proxy.
	Proxy func() (*x509grid.Credential, error)
	// Kerberos, when set, gives the user's Kerberos credential (the
	// tickets kinit left in a credential cache, KerberosFile.Get) for
	// servers that ask for one: krb5 on root:// and roots:// (the AP-REQ
	// is bound to the server's principal, so over root:// too), SPNEGO
	// (Authorization: Negotiate) on https:// to a server answering 401
	// with "WWW-Authenticate: Negotiate". It goes to the server the
	// client was made for and to the hosts a redirect leads to on the
	// terms the token goes there (see RedirectTo). It is asked again for
	// each connection (each challenge on https://), so a new kinit is
	// used from then on; its error is reported when a server needs it.
	Kerberos func() (*Kerberos, error)
	// GridRoots, when set, are the CAs servers must chain to instead of
	// the system roots: the grid CA directory ([auth.x509] cert_dir,
	// X509_CERT_DIR), for gsi's host certificates and https alike.
	GridRoots *x509.CertPool
	// RedirectTo, when set, is asked before a redirect to another server
	// ("host:port") is followed: an error refuses it, so that server is
	// never dialled, never sent the token nor the request's CGI
	// (authz=). Hosts it accepts are trusted with the token. A cache sets
	// it: its token is its own, not its user's.
	//
	// Nil follows every redirect, as a user's own client (XrdCl, curl)
	// does, but the token goes to another host only over TLS and only
	// once that host asked for it (an XRootD login that asks, 401 or 403
	// to an https request without it): a data server serving public
	// files never sees it.
	RedirectTo func(hostport string) error
	// DialContext, when set, makes every connection (redirects included)
	// instead of a plain net.Dialer; https:// then uses no proxy from the
	// environment, so that it sees the server's own address. Third-party
	// copies check there which servers a user may make the box reach.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxWait bounds the time one operation spends honouring a server's
	// "wait" (kXR_wait, 503 + Retry-After: a director still searching),
	// over all the servers it is sent to; zero means DefaultMaxWait.
	MaxWait time.Duration
	// Reconnect rides out a server that restarts or fails over: a
	// request that cannot reach its server, or loses the connection
	// before its answer, is sent again (unless a second try could do
	// harm: an upload, an open that truncates) until it is answered or
	// MaxWait is spent in all, and then fails with
	// store.ErrUnavailable. Off, such a request fails at once: a client
	// with other servers to turn to (a cache's upstreams, a director's
	// probes) tries those rather than wait. `sitebox mount` sets it.
	Reconnect bool
}

// CurrentToken is the token to present now: TokenFunc's, else Token.
func (o Options) CurrentToken() string {
	if o.TokenFunc != nil {
		return o.TokenFunc()
	}
	return o.Token
}

// Wait is MaxWait, or DefaultMaxWait when it is zero.
func (o Options) Wait() time.Duration { return cmp.Or(o.MaxWait, DefaultMaxWait) }
