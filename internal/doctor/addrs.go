package doctor

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"sitebox/internal/config"
)

// checkAddresses compares the addresses clients are given with this
// machine's own. A box advertises where clients should go; if that is not
// this machine (NAT, a stale DNS record), not the interface its replies
// leave by (two NICs), or loopback, clients fail in ways that are hard to
// trace from either end.
func checkAddresses(ctx context.Context, cfg *config.Config, o *Options) []Check {
	hosts, from := advertisedHosts(listeners(cfg, o.Hostname))
	if len(hosts) == 0 {
		return []Check{{Name: "advertised address", Status: StatusSkip, Summary: "no root:// or https:// listener"}}
	}
	ifs, err := o.Interfaces()
	if err != nil {
		return []Check{{Name: "interfaces", Status: StatusWarn, Summary: "cannot list this machine's interfaces: " + err.Error()}}
	}
	routes, _ := o.DefaultRoutes() // unknown routes: the two-NIC check is left out
	var out []Check
	for _, h := range hosts {
		out = append(out, checkHost(ctx, cfg, o, h, strings.Join(from[h], ", "), ifs, routes)...)
	}
	return out
}

func checkHost(ctx context.Context, cfg *config.Config, o *Options, host, from string, ifs []Interface, routes []string) []Check {
	name := host + " (" + from + ")"
	ips, err := o.resolve(ctx, host)
	if err != nil || len(ips) == 0 {
		_, words := classify(err, o.Timeout)
		if err == nil {
			words = "no addresses"
		}
		return []Check{{Name: name, Status: StatusError,
			Summary: fmt.Sprintf("%s does not resolve: %s", host, words),
			Explain: "Clients and directors are given " + host + " to connect to, and cannot find its address.",
			Fix:     "Add a DNS record (or an /etc/hosts line on every client) for " + host + ", or set [advertise] root_url and https_url to a name or address that resolves."}}
	}
	nonLoop := 0
	for _, it := range ifs {
		if it.Up && !it.Loopback && slices.ContainsFunc(it.Addrs, isRoutable) {
			nonLoop++
		}
	}
	var out []Check
	for _, ip := range ips {
		ip = ip.Unmap()
		is := resolvesTo(host, ip)
		switch iface := ifaceOf(ifs, ip); {
		case ip.IsLoopback():
			c := Check{Name: name, Status: StatusOK, Summary: fmt.Sprintf("%s (loopback): only clients on this machine can use it", is)}
			if len(cfg.Advertise.To) > 0 {
				c.Status = StatusWarn
				c.Summary = fmt.Sprintf("%s (loopback), and the box advertises it to %d director(s)", is, len(cfg.Advertise.To))
				c.Explain = fmt.Sprintf("Directors will send clients to %s, which on the clients' machines is the clients themselves: every redirect fails. Debian and Ubuntu map the hostname to 127.0.1.1 in /etc/hosts by default.", ip)
				c.Fix = "Set [advertise] root_url and https_url to the box's public name (e.g. root://t3-box.example.org:1094), or map the hostname to the public address in /etc/hosts."
			}
			out = append(out, c)
		case iface == "":
			out = append(out, Check{Name: name, Status: StatusWarn,
				Summary: fmt.Sprintf("%s, which is on none of this machine's interfaces (%s)", is, ifaceList(ifs)),
				Explain: fmt.Sprintf("Clients will be sent to %s, which is not this machine. Behind NAT that is the router's public address and works only if the router forwards the ports; otherwise the name is wrong or its DNS record stale.", ip),
				Fix:     "Behind NAT set [advertise] root_url and https_url to the public name and forward the root:// and https:// ports to this machine; otherwise correct the DNS record or the advertised URLs."})
		case nonLoop > 1 && len(routes) > 0 && !slices.Contains(routes, iface):
			out = append(out, Check{Name: name, Status: StatusWarn,
				Summary: fmt.Sprintf("%s on %s, but the default route leaves by %s (%d interfaces in use)", is, iface, strings.Join(routes, ", "), nonLoop),
				Explain: fmt.Sprintf("Clients connect to %s on %s, but replies to clients outside its subnet leave by %s: routing is asymmetric, and firewalls with connection tracking or rp_filter drop such replies, so distant clients hang while near ones work.", ip, iface, strings.Join(routes, ", ")),
				Fix:     fmt.Sprintf("Advertise the address on %s, or add a source route for %s: `ip rule add from %s table 100; ip route add default via GATEWAY dev %s table 100`.", strings.Join(routes, ", "), ip, ip, iface)})
		default:
			out = append(out, Check{Name: name, Status: StatusOK, Summary: fmt.Sprintf("%s, on %s", is, iface)})
		}
	}
	return out
}

// resolvesTo says "t3-box resolves to 10.0.0.5", or just the address
// when the host is one.
func resolvesTo(host string, ip netip.Addr) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap() == ip {
		return ip.String()
	}
	return host + " resolves to " + ip.String()
}

func isRoutable(a netip.Addr) bool { return !a.IsLoopback() && !a.IsLinkLocalUnicast() }

// ifaceOf names the interface carrying ip, or "".
func ifaceOf(ifs []Interface, ip netip.Addr) string {
	for _, it := range ifs {
		if slices.Contains(it.Addrs, ip) {
			return it.Name
		}
	}
	return ""
}

// ifaceList prints the routable addresses per interface: "eth0 10.0.0.5".
func ifaceList(ifs []Interface) string {
	var parts []string
	for _, it := range ifs {
		for _, a := range it.Addrs {
			if isRoutable(a) {
				parts = append(parts, it.Name+" "+a.String())
			}
		}
	}
	if len(parts) == 0 {
		return "none but loopback"
	}
	return strings.Join(parts, ", ")
}
