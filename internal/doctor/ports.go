package doctor

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"sitebox/internal/config"
)

// checkPorts tries each configured listener from this machine, then at
// the address clients are given. Working locally but not at the public
// address is the signature of a firewall or a wrong bind address, and
// the way it fails (refused or silent) tells which.
func checkPorts(ctx context.Context, cfg *config.Config, o *Options) []Check {
	ls := listeners(cfg, o.Hostname)
	if len(ls) == 0 {
		return []Check{{Name: "listeners", Status: StatusSkip, Summary: "root://, https:// and metrics are all off"}}
	}
	local := localAddrs(o)
	var out []Check
	for _, l := range ls {
		out = append(out, checkListener(ctx, l, local, o))
	}
	return out
}

func checkListener(ctx context.Context, l listener, local map[netip.Addr]string, o *Options) Check {
	c := Check{Name: fmt.Sprintf("%s %s (%s)", l.Role, l.Addr, l.Key)}
	_, port, _ := net.SplitHostPort(l.Local)
	if port == "0" {
		c.Status, c.Summary = StatusSkip, "port 0: the system picks a new port at each start"
		c.Fix = "Give a fixed port so clients and directors can be told it."
		return c
	}
	if err := probe(ctx, o, l.Local); err != nil {
		_, words := classify(err, o.Timeout)
		c.Status = StatusError
		c.Summary = fmt.Sprintf("nothing listens on %s (%s)", l.Local, words)
		c.Explain = "Clients cannot connect to this port at all: the box is not running, it could not bind " + l.Addr +
			" (another program holds the port, or a port below 1024 without root), or it runs with a different config."
		c.Fix = fmt.Sprintf("Start the box with this config (sitebox serve --config FILE) and read the first lines of its log; "+
			"`ss -ltnp 'sport = :%s'` shows which program holds the port.", port)
		return c
	}
	if l.Public == "" || l.Public == l.Local {
		c.Status, c.Summary = StatusOK, "listening on "+l.Local
		return c
	}
	host, pport, _ := net.SplitHostPort(l.Public)
	ips, err := o.resolve(ctx, host)
	if err != nil || len(ips) == 0 {
		c.Status = StatusWarn
		c.Summary = fmt.Sprintf("listening on %s, but the advertised name %s does not resolve, so it cannot be tried", l.Local, host)
		c.Explain = "Clients are given " + l.Public + " (from " + l.PublicFrom + "); see Addresses below."
		return c
	}
	if len(ips) > 4 {
		ips = ips[:4]
	}
	for _, ip := range ips {
		target := net.JoinHostPort(ip.String(), pport)
		err := probe(ctx, o, target)
		if err == nil {
			continue
		}
		return unreachable(c, l, ip, target, err, local, o)
	}
	c.Status = StatusOK
	c.Summary = fmt.Sprintf("listening on %s; reachable at %s (%s)", l.Local, l.Public, joinAddrs(ips))
	return c
}

// unreachable explains a listener that answers locally but not at the
// address clients are given.
func unreachable(c Check, l listener, ip netip.Addr, target string, err error, local map[netip.Addr]string, o *Options) Check {
	kind, words := classify(err, o.Timeout)
	_, port, _ := net.SplitHostPort(target)
	bindHost, bindPort, _ := net.SplitHostPort(l.Addr)
	c.Status = StatusError
	c.Summary = fmt.Sprintf("listening on %s, but clients are given %s (%s) and that fails: %s", l.Local, l.Public, ip, words)
	switch {
	case !isWildcard(bindHost) && bindHost != ip.String():
		c.Explain = fmt.Sprintf("The box listens only on %s, while clients are sent to %s (from %s): connections there find nothing.", bindHost, ip, l.PublicFrom)
		c.Fix = fmt.Sprintf("Listen on all addresses, %s = \"0.0.0.0:%s\", or on %s itself.", l.Key, bindPort, ip)
	case kind == failRefused:
		c.Explain = fmt.Sprintf("The box answers on %s, but %s refuses connections: a firewall on this machine rejects port %s (firewalld, ufw or nftables rules with reject).", l.Local, target, port)
		c.Fix = firewallFix(port)
	case kind == failTimeout:
		c.Explain = fmt.Sprintf("The box answers on %s, but packets to %s get no answer at all: the port is filtered — a firewall (on this machine, the site's, or a cloud security group) silently drops them.", l.Local, target)
		c.Fix = firewallFix(port) + " If this machine's firewall is open, ask the network team to allow inbound tcp/" + port + " to " + ip.String() + "."
	default:
		c.Explain = fmt.Sprintf("The box answers on %s, but clients are sent to %s, which cannot be reached from here.", l.Local, target)
		c.Fix = "Check " + l.PublicFrom + " and the routes to " + ip.String() + " (`ip route get " + ip.String() + "`)."
	}
	if _, mine := local[ip]; !mine && !ip.IsLoopback() {
		// Behind NAT the public address is the router's; many routers do
		// not loop a connection from inside back in (no hairpin NAT), so
		// a failure from here does not prove clients outside fail.
		c.Status = StatusWarn
		c.Explain += fmt.Sprintf(" %s is not an address of this machine (NAT?): the router may not loop connections from inside back in, so outside clients may still get through.", ip)
		c.Fix += fmt.Sprintf(" Try from a machine outside: `nc -vz %s %s`.", strings.Trim(ip.String(), "[]"), port)
	}
	return c
}

func firewallFix(port string) string {
	return fmt.Sprintf("Open the port: `firewall-cmd --permanent --add-port=%[1]s/tcp && firewall-cmd --reload`, or `ufw allow %[1]s/tcp`; `nft list ruleset` shows the rules.", port)
}

// probe connects to addr and hangs up.
func probe(ctx context.Context, o *Options, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := o.Dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// localAddrs maps this machine's addresses to their interface names.
func localAddrs(o *Options) map[netip.Addr]string {
	m := map[netip.Addr]string{}
	ifs, _ := o.Interfaces()
	for _, it := range ifs {
		for _, a := range it.Addrs {
			m[a] = it.Name
		}
	}
	return m
}
