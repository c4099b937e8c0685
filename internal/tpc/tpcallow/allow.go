// Package tpcallow decides which servers a box may connect to on a
// user's behalf in a third-party copy. Without it, anyone allowed to
// write a path could make the box fetch from (or send a file to) any host
// the box reaches, including services on its own network that the user
// cannot reach (server-side request forgery).
//
// A Policy is checked twice: on the host name before anything is
// resolved, and on every address at connect time, after DNS, so a name
// that resolves to a public address when checked and to 127.0.0.1 when
// dialled (DNS rebinding) is still refused.
package tpcallow

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"

	"sitebox/internal/store"
)

// ErrRefused is wrapped by every refusal, as is store.ErrPermission (so
// that the frontends answer 403 or kXR_NotAuthorized).
var ErrRefused = errors.New("third-party copy peer not allowed")

// refusal says what was refused and why.
type refusal struct{ msg string }

func refused(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

func (r *refusal) Error() string   { return ErrRefused.Error() + ": " + r.msg }
func (r *refusal) Unwrap() []error { return []error{ErrRefused, store.ErrPermission} }

// Policy is a parsed allow list; its zero value refuses everything. Safe
// for concurrent use.
//
// Entries are
//   - "*": any host name;
//   - "*.example.org": names under example.org; "host.example.org": that name;
//   - an address or CIDR ("192.0.2.7", "10.1.0.0/16", "2001:db8::/32"):
//     those addresses, even when private, loopback or link-local.
//
// A name entry lets the box connect to the name's public addresses only:
// a private, loopback, link-local or otherwise special address is
// reached only when an address entry covers it.
type Policy struct {
	anyName bool
	names   []string // exact names, lower case
	domains []string // ".example.org" for "*.example.org"
	nets    []netip.Prefix
	entries string // as configured, for messages
}

// Parse builds a Policy; the error names the first bad entry.
func Parse(entries []string) (*Policy, error) {
	p := &Policy{entries: strings.Join(entries, ", ")}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "*":
			p.anyName = true
		case strings.HasPrefix(e, "*."):
			if !validName(e[2:]) {
				return nil, fmt.Errorf("%q: not a host name pattern (e.g. \"*.example.org\")", e)
			}
			p.domains = append(p.domains, e[1:])
		case strings.Contains(e, "/"):
			pfx, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q: not a CIDR range (e.g. \"192.0.2.0/24\"): %v", e, err)
			}
			p.nets = append(p.nets, pfx.Masked())
		default:
			if a, err := netip.ParseAddr(e); err == nil {
				a = a.Unmap()
				p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			if !validName(e) {
				return nil, fmt.Errorf("%q: not a host name, *.domain pattern, address or CIDR range", e)
			}
			p.names = append(p.names, e)
		}
	}
	return p, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 253 || strings.Contains(s, "*") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// CheckHost checks a host ("name", "name:port", an address) before it is
// resolved: a name must match a name entry; an address must be covered
// by an address entry, or be public with "*" allowed.
func (p *Policy) CheckHost(hostport string) error {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if a, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(host, a)
	}
	if p.nameAllowed(host) {
		return nil
	}
	return refused("host %s is not in [tpc] allow (%s)", host, p.entries)
}

func (p *Policy) nameAllowed(host string) bool {
	if p.anyName {
		return true
	}
	for _, n := range p.names {
		if host == n {
			return true
		}
	}
	for _, d := range p.domains {
		if strings.HasSuffix(host, d) {
			return true
		}
	}
	return false
}

// CheckAddr checks an address host resolved to (or is): one an address
// entry covers is allowed; otherwise it must be public, and host a
// literal address only when "*" is allowed.
func (p *Policy) CheckAddr(host string, a netip.Addr) error {
	a = a.Unmap()
	for _, n := range p.nets {
		if n.Contains(a) {
			return nil
		}
	}
	literal := false
	if h, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && h.Unmap() == a {
		literal = true // the copy named the address itself
	}
	if kind := special(a); kind != "" {
		if literal {
			return refused("%s is a %s address; list it in [tpc] allow to reach it", a, kind)
		}
		return refused("%s is at %s, a %s address; list it in [tpc] allow to reach it", host, a, kind)
	}
	if literal && !p.anyName {
		return refused("address %s is not in [tpc] allow (%s)", a, p.entries)
	}
	return nil
}

// special names the kind of address a that is not public unicast, or
// returns "". An IPv6 address that carries an IPv4 one the kernel, a
// tunnel or a gateway would deliver to (IPv4-mapped, IPv4-compatible,
// IPv4-translated, NAT64, 6to4, Teredo) is judged by that IPv4 address
// too, so [::127.0.0.1] is loopback as 127.0.0.1 is.
func special(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, e := range embedded {
		if !e.pfx.Contains(a) {
			continue
		}
		for _, v4 := range e.v4(a.As16()) {
			if kind := special(v4); kind != "" {
				return kind + " (through " + e.via + ")"
			}
		}
		if e.never {
			return e.via
		}
	}
	for _, r := range reserved {
		if r.pfx.Contains(a) {
			return r.kind
		}
	}
	return ""
}

// embedded are the IPv6 forms that carry an IPv4 address. never marks
// the forms that are no public address whatever they carry: the
// deprecated IPv4-compatible form (which the kernel sends through a
// tunnel to the IPv4 address) and SIIT's translated form.
var embedded = []struct {
	pfx   netip.Prefix
	via   string
	never bool
	v4    func(b [16]byte) []netip.Addr
}{
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address", true, last4},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated address", true, last4},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64", false, last4},
	{netip.MustParsePrefix("2002::/16"), "6to4", false, func(b [16]byte) []netip.Addr {
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	}},
	{netip.MustParsePrefix("2001::/32"), "Teredo", false, func(b [16]byte) []netip.Addr {
		// The Teredo server's address, then the client's, stored inverted.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4(client)}
	}},
}

func last4(b [16]byte) []netip.Addr { return []netip.Addr{netip.AddrFrom4([4]byte(b[12:16]))} }

// reserved are further ranges that are not the public Internet
// (RFC 6890 and its updates).
var reserved = []struct {
	pfx  netip.Prefix
	kind string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\""},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
}

// DialContext connects as net.Dialer does after checking the host name,
// and checks each address the name resolves to just before connecting
// to it. Its errors wrap ErrRefused and name the host and address.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := p.CheckHost(addr); err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	d := net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refused("cannot read the address %q", address)
		}
		return p.CheckAddr(host, ap.Addr())
	}}
	return d.DialContext(ctx, network, addr)
}
