// Package clientnet names the network a client address belongs to, so
// that limits can count by network as well as by address: a client with
// a whole IPv4 /24 or IPv6 /64 at hand (every IPv6 host has one) is one
// client, not hundreds.
package clientnet

import "net/netip"

// Of returns the network of the client address addr (an IP address as
// net.Conn reports it, without a port): its IPv4 /24 ("192.0.2.0/24",
// IPv4-mapped IPv6 addresses included) or IPv6 /64 ("2001:db8:1:2::/64").
// Anything that is not an IP address is its own network.
func Of(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	bits := 64
	if ip.Is4() {
		bits = 24
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return addr
	}
	return p.String()
}
