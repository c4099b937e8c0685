package tpc

import (
	"context"
	"fmt"

	"sitebox/internal/remote"
	"sitebox/internal/store"
)

// RemoteSource opens the file at u (any URL remote.Dial takes) for
// reading with opts (the remote token rides in opts.Token). opaque, if
// not empty, is CGI sent with the open (root:// TPC's tpc.key, tpc.org).
func RemoteSource(ctx context.Context, u *remote.URL, opaque string, opts remote.Options) (Source, error) {
	c, err := u.Dial(opts)
	if err != nil {
		return Source{}, err
	}
	name := u.Path
	if opaque != "" {
		name += "?" + opaque
	}
	f, err := c.Open(ctx, name)
	if err != nil {
		c.Close()
		return Source{}, fmt.Errorf("source %s: %w", where(u), err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		c.Close()
		return Source{}, fmt.Errorf("source %s: %w", where(u), err)
	}
	return Source{
		File: f, Size: fi.Size,
		Checksum: func(ctx context.Context) (string, error) { return c.Checksum(ctx, u.Path, ChecksumAlgo) },
		Close: func() error {
			f.Close()
			return c.Close()
		},
	}, nil
}

// RemoteSink starts an upload to u. The upload is one ordered stream; on
// Abort it is cut off before its end, so the remote server never takes a
// short body for a whole file.
func RemoteSink(ctx context.Context, u *remote.URL, opts remote.Options) (Sink, error) {
	c, err := u.Dial(opts)
	if err != nil {
		return Sink{}, err
	}
	uctx, cancel := context.WithCancel(ctx)
	f, err := c.Create(uctx, u.Path, store.CreateOptions{Truncate: true, MkParents: true})
	if err != nil {
		cancel()
		c.Close()
		return Sink{}, fmt.Errorf("destination %s: %w", where(u), err)
	}
	ns, _ := c.(store.Namespace)
	return Sink{
		File:       f,
		Sequential: true,
		Checksum:   func(ctx context.Context) (string, error) { return c.Checksum(ctx, u.Path, ChecksumAlgo) },
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
