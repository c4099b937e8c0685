package cache

import (
	"fmt"
	"net/url"
	"strings"

	"sitebox/internal/davclient"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	xrdclient "sitebox/internal/xrootd/client"
)

// DialOptions are what upstream clients need besides the URL.
type DialOptions struct {
	Streams  int    // connections to a root:// upstream (default 16)
	CAFile   string // extra CA for https:// and roots:// upstreams
	Insecure bool   // skip certificate checks (tests only)
	// Token is the cache's own bearer token for its upstreams (https://,
	// and ztn over roots://); clients' tokens are never passed on.
	// TokenFunc, when set, is asked instead each time one is needed, so a
	// renewed token file is picked up without a restart.
	Token     string
	TokenFunc func() string
	// RedirectTo is asked before an upstream's redirect to another host
	// is followed (see hostlist.List.Check); nil follows none: a cache contacts
	// only its configured upstreams unless told which hosts to trust.
	RedirectTo func(hostport string) error
}

// redirectTo is opts.RedirectTo, or a refusal of every redirect to
// another host.
func (opts DialOptions) redirectTo() func(string) error {
	if opts.RedirectTo != nil {
		return opts.RedirectTo
	}
	return func(hostport string) error {
		return fmt.Errorf("redirect to %s refused: the cache follows no redirects to other hosts", hostport)
	}
}

// NewUpstream makes the clients for an upstream URL: root://host:port (a
// sitebox origin or director, or any XRootD server), roots://host:port
// (the same over TLS, with the cache's token) or https://host:port.
// A path in the URL ("root://host:1094//data") is where the route's prefix
// maps to upstream; without one, paths are passed as clients asked.
func NewUpstream(rawURL string, opts DialOptions) (Upstream, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || u.Port() == "" {
		return Upstream{}, fmt.Errorf("upstream %q: want root://, roots:// or https://host:port", rawURL)
	}
	up := Upstream{Name: rawURL}
	if p := "/" + strings.TrimLeft(u.Path, "/"); p != "/" {
		clean, err := store.CleanPath(p)
		if err != nil {
			return Upstream{}, fmt.Errorf("upstream %q: %w", rawURL, err)
		}
		up.PathPrefix = clean
	}
	switch u.Scheme {
	case "root", "xroot", "roots", "xroots":
		n := opts.Streams
		if n <= 0 {
			n = 16
		}
		co := xrdclient.Options{RedirectTo: opts.redirectTo()}
		if strings.HasSuffix(u.Scheme, "s") {
			if co.TLS, err = tlsutil.ClientConfig(opts.CAFile, opts.Insecure); err != nil {
				return Upstream{}, fmt.Errorf("upstream %q: %w", rawURL, err)
			}
			co.Token, co.TokenFunc = opts.Token, opts.TokenFunc
		}
		for range n {
			up.Streams = append(up.Streams, xrdclient.NewFSOptions(u.Host, co))
		}
		up.PassCGI = true
	case "https", "http":
		// net/http keeps a pool of connections per host already, so one
		// client carries parallel fetches over parallel streams.
		fs, err := davclient.New(u.Scheme+"://"+u.Host, davclient.Options{CAFile: opts.CAFile, Insecure: opts.Insecure, Token: opts.Token, TokenFunc: opts.TokenFunc, RedirectTo: opts.redirectTo()})
		if err != nil {
			return Upstream{}, err
		}
		up.Streams = []store.Store{fs}
	default:
		return Upstream{}, fmt.Errorf("upstream %q: scheme must be root, roots or https", rawURL)
	}
	return up, nil
}
