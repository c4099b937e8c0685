package upstream

import (
	"fmt"
	"net/url"
	"strings"

	"sitebox/internal/remote"
)

// DialOptions are what upstream clients need besides the URL: how many
// streams a root:// upstream gets, and the options every remote client
// takes. Token (or TokenFunc) is the cache's own bearer token for its
// upstreams (https://, and ztn over roots://); clients' tokens are never
// passed on. RedirectTo is asked before an upstream's redirect to another
// host is followed (see hostlist.List.Check); nil follows none: a cache
// contacts only its configured upstreams unless told which hosts to trust.
type DialOptions struct {
	Streams int // connections to a root:// upstream (default 16)
	remote.Options
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

// Dial makes the clients for an upstream URL of a scheme
// remote.Dial accepts: root://host:port (a sitebox origin or director, or
// any XRootD server), roots://host:port (the same over TLS, with the
// cache's token), https://host:port, and their other names.
// A path in the URL ("root://host:1094//data") is where the route's prefix
// maps to upstream; without one, paths are passed as clients asked.
func Dial(rawURL string, opts DialOptions) (Config, error) {
	pu, err := url.Parse(rawURL)
	if err != nil || pu.Host == "" || pu.Port() == "" {
		return Config{}, fmt.Errorf("upstream %q: want a URL like root://host:port; schemes: %s", rawURL, remote.SchemeList())
	}
	u, err := remote.Parse(rawURL)
	if err != nil {
		return Config{}, fmt.Errorf("upstream: %w", err)
	}
	up := Config{Name: rawURL}
	if strings.TrimLeft(pu.Path, "/") != "" {
		up.PathPrefix = u.Path // even "/": the route's prefix maps to the top
	}
	ro := opts.Options
	ro.RedirectTo = opts.redirectTo()
	n := 1
	if u.XRootD() {
		// One connection carries one TCP window per RTT; net/http keeps a
		// pool of connections per host already, so one https client
		// carries parallel fetches over parallel streams.
		n = opts.Streams
		if n <= 0 {
			n = 16
		}
		up.PassCGI = true
	}
	for range n {
		c, err := u.Dial(ro)
		if err != nil {
			return Config{}, fmt.Errorf("upstream: %w", err)
		}
		up.Streams = append(up.Streams, c)
	}
	return up, nil
}
