package box

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// isSelf reports whether hostport names one of the box's own data
// listeners ([root], [https]): the same port, and a host that is, or
// resolves to, an address that listener accepts on this machine. Job
// staging serves such URLs from the box's own namespace, as their owner.
func (b *Box) isSelf(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	var addrs []netip.Addr
	for _, ln := range []net.Listener{b.data.rootLn, b.data.httpsLn} {
		la, ok := tcpAddr(ln)
		if !ok || strconv.Itoa(la.Port) != port {
			continue
		}
		if addrs == nil {
			if addrs = resolve(host); len(addrs) == 0 {
				return false
			}
		}
		for _, a := range addrs {
			if bound, ok := netip.AddrFromSlice(la.IP); ok && !bound.IsUnspecified() && bound.Unmap() == a {
				return true
			}
			if la.IP.IsUnspecified() && isLocalAddr(a) {
				return true
			}
		}
	}
	return false
}

func tcpAddr(ln net.Listener) (*net.TCPAddr, bool) {
	if ln == nil {
		return nil, false
	}
	a, ok := ln.Addr().(*net.TCPAddr)
	return a, ok
}

// resolve is host's addresses (itself when it is one), unmapped.
func resolve(host string) []netip.Addr {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	as, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for i := range as {
		as[i] = as[i].Unmap()
	}
	return as
}

// isLocalAddr reports whether a is a loopback address or one of this
// machine's interfaces'.
func isLocalAddr(a netip.Addr) bool {
	if a.IsLoopback() {
		return true
	}
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range ifs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}
