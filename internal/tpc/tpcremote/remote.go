// Package tpcremote is the remote side of third-party copies: it reaches
// the other server through internal/remote, for the frontends that take
// it as a tpc.Remote (the box wires it; the frontends import no client).
package tpcremote

import (
	"context"
	"errors"
	"fmt"

	"sitebox/internal/hostlist"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
	"sitebox/internal/tpc/tpcallow"
	"sitebox/internal/x509grid"
	xrdclient "sitebox/internal/xrootd/client"
)

// Dialer is a tpc.Remote over internal/remote; Options are the base of
// every connection (the copy's token is added per call).
type Dialer struct {
	Options remote.Options
	// Allow says which servers a copy may reach, checked on the host
	// name and on every address it resolves to when connecting
	// (redirects included). Nil refuses every server.
	Allow *tpcallow.Policy
	// Proxy is the box's own X.509 proxy ([tpc] proxy_file), presented
	// only to the servers ProxyHosts lists ([tpc] proxy_hosts) and never
	// sent on by their redirects to other hosts (Options.GridRoots
	// checks their certificates). The other end of a copy is the user's
	// choice: elsewhere the copy goes with the user's token or nothing,
	// never with the box's identity.
	Proxy      func() (*x509grid.Credential, error)
	ProxyHosts *hostlist.List
}

var _ tpc.Remote = Dialer{}

// Parse checks raw as any URL remote.Dial takes.
func (d Dialer) Parse(raw string) (tpc.Where, error) {
	u, err := remote.Parse(raw)
	if err != nil {
		return tpc.Where{}, err
	}
	if err := d.allow().CheckHost(u.Host); err != nil {
		return tpc.Where{}, err
	}
	return tpc.Where{Raw: raw, Scheme: u.Scheme, Host: u.Host, Path: u.Path, TLS: remote.Encrypted(u.Scheme)}, nil
}

func (d Dialer) allow() *tpcallow.Policy {
	if d.Allow == nil {
		return &tpcallow.Policy{}
	}
	return d.Allow
}

// Source opens the file at w for reading.
func (d Dialer) Source(ctx context.Context, w tpc.Where, opaque, token string) (tpc.Source, error) {
	u, opts, err := d.dial(w, token)
	if err != nil {
		return tpc.Source{}, err
	}
	src, err := source(ctx, u, opaque, opts)
	return src, d.explain(u, err)
}

// Sink starts an upload to w.
func (d Dialer) Sink(ctx context.Context, w tpc.Where, token string, size int64) (tpc.Sink, error) {
	u, opts, err := d.dial(w, token)
	if err != nil {
		return tpc.Sink{}, err
	}
	snk, err := sink(ctx, u, opts, size)
	return snk, d.explain(u, err)
}

func (d Dialer) dial(w tpc.Where, token string) (*remote.URL, remote.Options, error) {
	u, err := remote.Parse(w.Raw)
	if err != nil {
		return nil, remote.Options{}, err
	}
	opts := d.Options
	// Parse checked the name already, before any DNS lookup; the
	// addresses are checked as each connection is made.
	opts.DialContext = d.allow().DialContext
	if token != "" {
		opts.Token = token
	}
	if d.Proxy != nil && d.ProxyHosts != nil && d.ProxyHosts.Allows(u.Host) {
		// The server's certificate is checked for its name against the
		// grid CAs, so the proxy goes to that server and no other; its
		// redirects are followed only to hosts also listed.
		opts.Proxy, opts.RedirectTo = d.Proxy, d.ProxyHosts.Check
	}
	return u, opts, nil
}

// explain adds to err what to do when the server asked for a
// credential the copy does not have: gsi with no proxy to present.
func (d Dialer) explain(u *remote.URL, err error) error {
	if !errors.Is(err, xrdclient.ErrNoAuth) {
		return err
	}
	if d.Proxy != nil && d.ProxyHosts != nil && d.ProxyHosts.Allows(u.Host) {
		return err
	}
	return fmt.Errorf("%w; the box presents its own X.509 proxy only to the servers [tpc] proxy_hosts lists, and %s is not one of them (a copy acts for its user, who can delegate no proxy to the box)", err, u.Host)
}

// httpWindow is how much of an HTTP source a one-stream copy asks for
// with one GET (tpc.Source.Window): 16 requests for 1 GiB rather than
// 256, while a request still ends now and then.
const httpWindow = 64 << 20

// source opens the file at u (any URL remote.Dial takes) for
// reading with opts (the remote token rides in opts.Token). opaque, if
// not empty, is CGI sent with the open (root:// TPC's tpc.key, tpc.org).
func source(ctx context.Context, u *remote.URL, opaque string, opts remote.Options) (tpc.Source, error) {
	c, err := u.Dial(opts)
	if err != nil {
		return tpc.Source{}, err
	}
	name := u.Path
	if opaque != "" {
		name += "?" + opaque
	}
	f, err := c.Open(ctx, name)
	if err != nil {
		c.Close()
		return tpc.Source{}, fmt.Errorf("source %s: %w", where(u), err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		c.Close()
		return tpc.Source{}, fmt.Errorf("source %s: %w", where(u), err)
	}
	var window int64
	if !u.XRootD() {
		window = httpWindow
	}
	return tpc.Source{
		File: f, Size: fi.Size, Window: window,
		Checksum: func(ctx context.Context) (string, error) { return store.Checksum(ctx, c, u.Path, tpc.ChecksumAlgo) },
		Close: func() error {
			f.Close()
			return c.Close()
		},
	}, nil
}

// sink starts an upload to u. The upload is one ordered stream; on
// Abort it is cut off before its end, so the remote server never takes a
// short body for a whole file.
func sink(ctx context.Context, u *remote.URL, opts remote.Options, size int64) (tpc.Sink, error) {
	c, err := u.Dial(opts)
	if err != nil {
		return tpc.Sink{}, err
	}
	uctx, cancel := context.WithCancel(ctx)
	f, err := store.Create(uctx, c, u.Path, store.CreateOptions{Truncate: true, MkParents: true, Size: size})
	if err != nil {
		cancel()
		c.Close()
		return tpc.Sink{}, fmt.Errorf("destination %s: %w", where(u), err)
	}
	ns, _ := store.As[store.Namespace](c)
	return tpc.Sink{
		File:       f,
		Sequential: true,
		Cancel:     cancel,
		Checksum:   func(ctx context.Context) (string, error) { return store.Checksum(ctx, c, u.Path, tpc.ChecksumAlgo) },
		Commit: func(context.Context) error {
			cancel()
			return c.Close()
		},
		Abort: func(ctx context.Context) {
			// Cancelling before Close makes the HTTP client abort the
			// request instead of ending the body cleanly.
			cancel()
			if f.Close() == nil && ns != nil {
				// The upload had completed (a checksum mismatch): the
				// file on the server is ours and wrong.
				ns.Remove(ctx, u.Path)
			}
			c.Close()
		},
	}, nil
}

// where names u in messages without its query, which may hold a token.
func where(u *remote.URL) string { return u.Scheme + "://" + u.Host + u.Path }
