package director

import (
	"fmt"
	"net/url"

	"sitebox/internal/store"
)

// Config gathers the director's runtime Config: the file's settings
// (their durations as decoded, no second parse) with the URLs turned
// into endpoints, for the box named name at site, keeping its state in
// stateDir. The settings have been validated; what still fails is
// reported with its key.
func (d *Settings) Config(name, site, stateDir string) (Config, error) {
	c := Config{Name: name, Site: site, DefaultVO: d.DefaultVO, DropAfter: d.DropAfter, VO: map[string]store.Endpoint{},
		LocateTimeout: d.LocateTimeout.D(), CacheTTL: d.CacheTTL.D(), NegativeTTL: d.NegativeTTL.D(), DownWait: d.DownWait.D()}
	if d.StartupWait != nil {
		c.StartupWait = d.StartupWait.D()
	}
	for _, p := range d.Parents {
		c.Parents = append(c.Parents, EndpointOf(p))
	}
	for vo, u := range d.VO {
		c.VO[vo] = EndpointOf(u)
	}
	for _, s := range d.Servers {
		ep := EndpointOf(s.Root)
		c.Static = append(c.Static, Ad{Name: s.Name, Site: s.Site, Role: s.Role, Root: ep.Root, HTTPS: s.HTTPS, Prefixes: s.Prefixes})
	}
	c.MembersFile, c.MaxServers = MembersFile(stateDir), d.MaxServers
	for _, m := range d.Members {
		mem := m.member()
		if err := mem.Check(); err != nil {
			return Config{}, fmt.Errorf("director.member: %w", err)
		}
		c.Members = append(c.Members, mem)
	}
	return c, nil
}

// EndpointOf turns a root:// or https:// URL into an endpoint (the zero
// endpoint when raw is not a URL).
func EndpointOf(raw string) store.Endpoint {
	u, err := url.Parse(raw)
	if err != nil {
		return store.Endpoint{}
	}
	if u.Scheme == "root" {
		return store.Endpoint{Root: u.Host}
	}
	return store.Endpoint{HTTPS: u.Scheme + "://" + u.Host}
}
