package staging

import (
	"fmt"
	"strings"

	"sitebox/internal/jobs/spec"
	"sitebox/internal/remote"
	"sitebox/internal/store"
)

// place is where one staged file is: in the box's own namespace
// (Server nil), or on another server.
type place struct {
	Server *remote.URL // its scheme and host; nil for the box itself
	Path   string      // the clean path, in the box or on Server
	// Site: Server is the site cache's, the only one the box's own
	// token may go to.
	Site bool
}

// String names the place in logs and errors: the path, or the URL
// without any query (which may carry a token).
func (p place) String() string {
	if p.Server == nil {
		return p.Path
	}
	if p.Server.XRootD() {
		return p.Server.Scheme + "://" + p.Server.Host + "/" + p.Path
	}
	return p.Server.Scheme + "://" + p.Server.Host + p.Path
}

// via says which way a place is reached, for logs.
func (p place) via() string {
	switch {
	case p.Server == nil:
		return "the box"
	case p.Site:
		return "the site cache"
	}
	return "another server"
}

// input is where an input is read from. A federation path is the site's
// namespace (see site); a URL naming the box itself is the box's own
// namespace; with a site cache, any other URL is read through the cache
// by its path, so the WAN carries each byte once for all jobs; without
// one, from the server it names.
func (s *Stager) input(from string) (place, error) {
	switch {
	case strings.HasPrefix(from, spec.LocalInputPrefix):
		return place{}, fmt.Errorf("%s: a local file must be sent with the submission", from)
	case strings.HasPrefix(from, "/"):
		p, err := store.CleanPath(from)
		if err != nil {
			return place{}, err
		}
		return s.site(p)
	case !strings.Contains(from, "://"):
		return place{}, fmt.Errorf("%q is neither a URL nor a federation path", from)
	}
	u, err := remote.Parse(from)
	if err != nil {
		return place{}, err
	}
	switch {
	case s.isSelf(u.Host):
		return place{Path: u.Path}, nil
	case s.Cache != "":
		return s.site(u.Path)
	}
	return place{Server: u, Path: u.Path}, nil
}

// output is where output name goes under the destination directory
// destDir: a URL (the box itself, the site cache's server, or another
// server), or a federation path in the site's namespace.
func (s *Stager) output(destDir, name string) (place, error) {
	rel, err := store.CleanPath("/" + name)
	if err != nil {
		return place{}, fmt.Errorf("output name %q: %w", name, err)
	}
	if strings.HasPrefix(destDir, "/") {
		p, err := store.CleanPath(strings.TrimRight(destDir, "/") + rel)
		if err != nil {
			return place{}, err
		}
		return s.site(p)
	}
	if !strings.Contains(destDir, "://") {
		return place{}, fmt.Errorf("output destination %q is neither a URL nor a federation path", destDir)
	}
	u, err := remote.Parse(destDir)
	if err != nil {
		return place{}, err
	}
	p, err := store.CleanPath(strings.TrimRight(u.Path, "/") + rel)
	if err != nil {
		return place{}, err
	}
	if s.isSelf(u.Host) {
		return place{Path: p}, nil
	}
	return place{Server: u, Path: p, Site: s.isSite(u)}, nil
}

// site is federation path p in the site's namespace: the box's own,
// unless the site cache is another server.
func (s *Stager) site(p string) (place, error) {
	c, ok := s.cache()
	if !ok {
		return place{Path: p}, nil
	}
	return place{Server: c, Path: p, Site: true}, nil
}

// cache is the site cache when it is another server than this box.
func (s *Stager) cache() (*remote.URL, bool) {
	if s.Cache == "" {
		return nil, false
	}
	c, err := remote.Parse(s.Cache)
	if err != nil || s.isSelf(c.Host) {
		return nil, false
	}
	return c, true
}

// isSite reports whether u names the site cache's server: the same host
// and port and the same protocol, encrypted whenever the cache's is.
func (s *Stager) isSite(u *remote.URL) bool {
	c, ok := s.cache()
	if !ok || !strings.EqualFold(c.Host, u.Host) || c.XRootD() != u.XRootD() {
		return false
	}
	return remote.Encrypted(u.Scheme) || !remote.Encrypted(c.Scheme)
}

func (s *Stager) isSelf(host string) bool { return s.Self != nil && s.Self(host) }
