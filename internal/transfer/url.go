// Package transfer copies files between local disk and any server a URL
// names (see package remote) through the store.Store interface, so the
// same code serves `sitebox get/put/ls/stat/cksum` whatever the protocol.
package transfer

import (
	"io"

	"sitebox/internal/remote"
	"sitebox/internal/store"
)

// Options for reaching remote servers: remote's, so the CLI, job staging
// and the benches reach servers as the cache does. Left nil, RedirectTo
// follows redirects to any host (the user chose the server that sends
// them), but the token reaches another host only over TLS and only when
// that host asks for it: an https server answering 401 or 403 without it,
// a roots:// server whose login asks for authentication. Never in clear,
// never in a URL.
type Options = remote.Options

// Remote is a store reached through a URL plus the path within it.
type Remote struct {
	Store store.Store
	Path  string
	URL   string
	io.Closer
}

// IsRemote reports whether s names a remote URL rather than a local path.
func IsRemote(s string) bool { return remote.IsURL(s) }

// Open parses a URL of a scheme remote.Dial accepts and returns a client
// store for it. For XRootD the path follows the host
// (root://host:port//store/f); CGI after "?" is dropped from the path.
func Open(raw string, opts Options) (*Remote, error) {
	u, err := remote.Parse(raw)
	if err != nil {
		return nil, err
	}
	c, err := u.Dial(opts)
	if err != nil {
		return nil, err
	}
	return &Remote{Store: c, Path: u.Path, URL: raw, Closer: c}, nil
}
