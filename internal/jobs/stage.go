package jobs

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"sitebox/internal/jobs/spec"
	"sitebox/internal/transfer"
)

// inputName is the sandbox name of an input: As, else the last element
// of its URL or path.
func inputName(in spec.Input) string {
	if in.As != "" {
		return in.As
	}
	p := in.From
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	return path.Base(p)
}

// TransferStager moves job data with sitebox's own clients: inputs named
// by federation path, or by URL when a site cache is configured, are read
// through that cache (so the WAN carries each byte once for all jobs);
// other URLs directly. Outputs are written to the destination directory
// URL under their own names.
type TransferStager struct {
	// Cache is the site cache, e.g. "root://127.0.0.1:1094" ("" none).
	Cache string
	Opts  transfer.Options
}

// Fetch copies one input to dst.
func (t *TransferStager) Fetch(ctx context.Context, in spec.Input, dst string) error {
	src, err := t.source(in.From)
	if err != nil {
		return err
	}
	r, err := transfer.Open(src, t.Opts)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = transfer.Get(ctx, r, dst, nil)
	return err
}

// source is where an input is read from.
func (t *TransferStager) source(from string) (string, error) {
	switch {
	case strings.HasPrefix(from, spec.LocalInputPrefix):
		return "", fmt.Errorf("%s: a local file must be sent with the submission", from)
	case strings.HasPrefix(from, "/"):
		if t.Cache == "" {
			return "", fmt.Errorf("%s: a federation path needs the site cache ([jobs] cache)", from)
		}
		return joinURL(t.Cache, from), nil
	case transfer.IsRemote(from):
		if t.Cache == "" {
			return from, nil
		}
		u, err := url.Parse(from)
		if err != nil {
			return "", fmt.Errorf("%q is not a URL: %w", from, err)
		}
		return joinURL(t.Cache, "/"+strings.TrimLeft(u.Path, "/")), nil
	}
	return "", fmt.Errorf("%q is neither a URL nor a federation path", from)
}

// joinURL puts a namespace path after a root:// or https:// base, with
// root://'s double slash.
func joinURL(base, p string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasPrefix(base, "root") {
		return base + "/" + p
	}
	return base + p
}

// Deliver writes src as name under the directory URL destDir.
func (t *TransferStager) Deliver(ctx context.Context, src, destDir, name string) error {
	dst := strings.TrimRight(destDir, "/") + "/" + strings.TrimLeft(path.Clean(name), "/")
	r, err := transfer.Open(dst, t.Opts)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = transfer.Put(ctx, src, r, true, nil)
	return err
}
