package director

import (
	"context"
	"net"
	"sync"
	"time"
)

// siteMap tells a client's site from its address: the site whose servers
// are on the client's network (an IPv4 /24, an IPv6 /64), when exactly
// one is. A regional director so prefers a replica, and the cache, at
// the client's own site. Server host names are resolved when they
// advertise, never while a client waits.
type siteMap struct {
	mu   sync.Mutex
	nets map[string]map[string]bool // network → sites with a server there
	// hosts is when each site's host was last resolved, by site and
	// host: a host that servers of two sites share must be noted for
	// both, or its network would pass for the first one's.
	hosts map[siteHost]time.Time
}

type siteHost struct{ site, host string }

// resolveEvery bounds how often one host name is looked up again.
const resolveEvery = 10 * time.Minute

// maxSiteHosts bounds the map: past it (servers churning through host
// names) it starts afresh, refilled by the next advertisements.
const maxSiteHosts = 2 * DefaultMaxServers

// note records that a server of site runs on host.
func (m *siteMap) note(site, host string) {
	if site == "" || host == "" {
		return
	}
	m.mu.Lock()
	key := siteHost{site, host}
	last, seen := m.hosts[key]
	if seen && time.Since(last) < resolveEvery {
		m.mu.Unlock()
		return
	}
	if m.hosts == nil || len(m.hosts) >= maxSiteHosts {
		m.hosts, m.nets = map[siteHost]time.Time{}, map[string]map[string]bool{}
	}
	m.hosts[key] = time.Now()
	m.mu.Unlock()

	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		cancel()
		if err != nil {
			return
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ip := range ips {
		n := network(ip)
		if m.nets[n] == nil {
			m.nets[n] = map[string]bool{}
		}
		m.nets[n][site] = true
	}
}

// site returns the one site with servers on client's network, or "".
func (m *siteMap) site(client string) string {
	ip := net.ParseIP(client)
	if ip == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sites := m.nets[network(ip)]
	if len(sites) != 1 {
		return "" // none, or several sites share it (one machine, NAT)
	}
	for s := range sites {
		return s
	}
	return ""
}

func network(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.Mask(net.CIDRMask(24, 32)).String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String()
}
