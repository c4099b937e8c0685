// Package transfer copies files between local disk and any root:// or
// https:// server through the store.Store interface, so the same code
// serves `sitebox get/put/ls/stat/cksum` whatever the protocol.
package transfer

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"sitebox/internal/davclient"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/xrootd/client"
)

// Options for reaching remote servers.
type Options struct {
	CAFile   string // extra CA for https:// and roots:// (a box's self-signed cert)
	Insecure bool   // skip certificate checks
	// Token is a bearer token for https:// servers and for roots://
	// servers (ztn over TLS). Redirects are followed to any host (the
	// user chose the server that sends them), but the token reaches
	// another host only over TLS and only when that host asks for it: an
	// https server answering 401 or 403 without it, a roots:// server
	// whose login asks for authentication. Never in clear, never in a URL.
	Token string
	// TokenFunc, when set, gives the token each time instead (a long-lived
	// user such as the job stager picks up renewed tokens).
	TokenFunc func() string
}

// Remote is a store reached through a URL plus the path within it.
type Remote struct {
	Store store.Store
	Path  string
	URL   string
	io.Closer
}

// IsRemote reports whether s names a remote URL rather than a local path.
func IsRemote(s string) bool {
	return strings.HasPrefix(s, "root://") || strings.HasPrefix(s, "roots://") ||
		strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// Open parses a root:// or https:// URL and returns a client store for it.
// For root:// the path follows the host (root://host:port//store/f); CGI
// after "?" is dropped from the path.
func Open(raw string, opts Options) (*Remote, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	p, err := store.CleanPath("/" + strings.TrimLeft(u.Path, "/"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	switch u.Scheme {
	case "root", "roots":
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "1094")
		}
		var co client.Options
		if u.Scheme == "roots" {
			// The token goes only over TLS (ztn), never in clear.
			if co.TLS, err = tlsutil.ClientConfig(opts.CAFile, opts.Insecure); err != nil {
				return nil, err
			}
			co.Token, co.TokenFunc = opts.Token, opts.TokenFunc
		}
		fs := client.NewFSOptions(host, co)
		return &Remote{Store: fs, Path: p, URL: raw, Closer: fs}, nil
	case "https", "http":
		fs, err := davclient.New(u.Scheme+"://"+u.Host, davclient.Options{CAFile: opts.CAFile, Insecure: opts.Insecure, Token: opts.Token, TokenFunc: opts.TokenFunc})
		if err != nil {
			return nil, err
		}
		// Redirects (a director's 307) and waits (503 + Retry-After) are
		// followed inside davclient, for every command.
		return &Remote{Store: fs, Path: p, URL: raw, Closer: fs}, nil
	}
	return nil, fmt.Errorf("%q: unsupported scheme %q (use root:// or https://)", raw, u.Scheme)
}
