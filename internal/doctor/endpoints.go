package doctor

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"sitebox/internal/config"
)

// listener is one configured listen address and what clients are told
// to use for it.
type listener struct {
	Role string // "root://", "https://", "metrics"
	Key  string // the setting, e.g. "[root] addr"
	Addr string // as configured
	// Local is what to dial on this machine: the address itself, with a
	// wildcard host replaced by 127.0.0.1.
	Local string
	// Public is the host:port clients are given, and PublicFrom where it
	// comes from; Public is "" for listeners that are not advertised.
	Public, PublicFrom string
}

// listeners lists the enabled listeners of cfg, with the public address
// worked out the way the box does when it advertises itself: the
// [advertise] URL, else the listen address with a wildcard host replaced
// by the hostname.
func listeners(cfg *config.Config, hostname string) []listener {
	var out []listener
	add := func(role, key, addr, advURL, advKey string) {
		if addr == "" || addr == config.Off {
			return
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return // the config check names it
		}
		l := listener{Role: role, Key: key, Addr: addr, Local: net.JoinHostPort(host, port)}
		if isWildcard(host) {
			l.Local = net.JoinHostPort("127.0.0.1", port)
		}
		switch {
		case role == "metrics":
		case advURL != "":
			if u, err := url.Parse(advURL); err == nil && u.Host != "" {
				l.Public, l.PublicFrom = hostPort(u), advKey
			}
		case isWildcard(host):
			l.Public, l.PublicFrom = net.JoinHostPort(hostname, port), "the hostname (no "+advKey+")"
		default:
			l.Public, l.PublicFrom = l.Local, key
		}
		out = append(out, l)
	}
	add("root://", "[root] addr", cfg.Root.Addr, cfg.Advertise.RootURL, "[advertise] root_url")
	add("https://", "[https] addr", cfg.HTTPS.Addr, cfg.Advertise.HTTPSURL, "[advertise] https_url")
	if d := cfg.Director; d.Enabled && d.OwnListeners() {
		// The director beside the box's data roles, on ports of its own.
		add("root://", "[director] root_addr", d.RootAddr, d.RootURL, "[director] root_url")
		add("https://", "[director] https_addr", d.HTTPSAddr, d.HTTPSURL, "[director] https_url")
	}
	add("metrics", "[server] metrics_addr", cfg.Server.MetricsAddr, "", "")
	return out
}

func isWildcard(host string) bool {
	ip, err := netip.ParseAddr(host)
	return host == "" || (err == nil && ip.IsUnspecified())
}

// hostPort is the URL's host:port, with the scheme's usual port when the
// URL names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "443"
	switch u.Scheme {
	case "root", "roots", "xroot", "xroots":
		port = "1094"
	case "http":
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// advertisedHosts are the distinct hosts clients are given, each with the
// settings it comes from.
func advertisedHosts(ls []listener) (hosts []string, from map[string][]string) {
	from = map[string][]string{}
	for _, l := range ls {
		if l.Public == "" {
			continue
		}
		h, _, _ := net.SplitHostPort(l.Public)
		if _, seen := from[h]; !seen {
			hosts = append(hosts, h)
		}
		if !slices.Contains(from[h], l.PublicFrom) {
			from[h] = append(from[h], l.PublicFrom)
		}
	}
	return hosts, from
}

// joinAddrs prints addresses for a summary: "10.0.0.5, 10.0.0.6".
func joinAddrs(ips []netip.Addr) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	return strings.Join(s, ", ")
}
