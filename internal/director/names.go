package director

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// A member's endpoints name the hosts the director sends clients to and,
// in a federation whose director is its CA, the names its certificate
// carries. A name no client elsewhere can use, or one that is not one
// host, has no place there: each refusal says why.

var (
	// ErrLoopback marks a loopback name or address: refused unless the
	// operator approves for a test federation on one machine.
	ErrLoopback = errors.New("is a loopback address or name: clients elsewhere would reach their own machine (for a test federation on one machine, approve with --allow-loopback)")
	// ErrUnqualified marks a name of one label ("t3box"): a redirect to
	// it works where the name resolves, but a certificate for it would
	// be valid for every host of that name at every site, so a director
	// that is its federation's CA refuses it.
	ErrUnqualified = errors.New("is not a fully qualified name: a federation CA's certificate for it would be valid for every host of that name, at every site")
)

// CheckHost says why host may not be a member's endpoint host (or a name
// in its certificate), nil if it may. Loopback names and addresses wrap
// ErrLoopback, names of one label ErrUnqualified: whether those are
// refused is the caller's to decide.
func CheckHost(host string) error {
	if host == "" {
		return errors.New("the endpoint names no host")
	}
	if ip := net.ParseIP(host); ip != nil {
		return checkIP(host, ip)
	}
	if strings.Contains(host, "*") {
		return fmt.Errorf("%q is a wildcard: a member's certificate names its own hosts only", host)
	}
	if err := checkDNSName(host); err != nil {
		return err
	}
	h := strings.ToLower(host)
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return fmt.Errorf("%q %w", host, ErrLoopback)
	case strings.HasSuffix(h, ".local"):
		return fmt.Errorf("%q is a link-local (mDNS) name: it names a host on each client's own network", host)
	case !strings.Contains(h, "."):
		return fmt.Errorf("%q %w", host, ErrUnqualified)
	}
	return nil
}

func checkIP(host string, ip net.IP) error {
	switch {
	case ip.IsUnspecified():
		return fmt.Errorf("%q is the unspecified address, no host", host)
	case ip.IsLoopback():
		return fmt.Errorf("%q %w", host, ErrLoopback)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return fmt.Errorf("%q is a link-local address: it names a host on each client's own network", host)
	case ip.IsMulticast(), ip.Equal(net.IPv4bcast):
		return fmt.Errorf("%q is a multicast or broadcast address, no host", host)
	}
	return nil
}

// checkDNSName refuses what is no host name (RFC 1123): labels of 1-63
// letters, digits and inner hyphens, 253 bytes in all, and a last label
// that is not all digits (resolvers read "127.1" as an address).
func checkDNSName(name string) error {
	if len(name) > 253 {
		return fmt.Errorf("%q is not a host name: over 253 bytes", abbrev(name, 40))
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 {
			return fmt.Errorf("%q is not a host name: empty or over-long label", name)
		}
		for i, c := range []byte(l) {
			alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			if !alnum && (c != '-' || i == 0 || i == len(l)-1) {
				return fmt.Errorf("%q is not a host name: %q is not allowed there", name, string(c))
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Errorf("%q is not a host name: it reads as an address", name)
	}
	return nil
}

// endpoint is one of a member's endpoints: what it is, its host and its
// host:port.
type endpoint struct{ what, host, hostPort string }

// endpoints are m's endpoints, or why one cannot be read.
func (m *Member) endpoints() ([]endpoint, error) {
	var out []endpoint
	if m.Root != "" {
		hp := strings.TrimPrefix(m.Root, "root://")
		host, port, err := net.SplitHostPort(strings.TrimSuffix(hp, "/"))
		if err != nil || port == "" {
			return nil, fmt.Errorf("root endpoint %q: want host:port", m.Root)
		}
		out = append(out, endpoint{"root", host, net.JoinHostPort(strings.ToLower(host), port)})
	}
	if m.HTTPS != "" {
		u, err := url.Parse(m.HTTPS)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.Port() == "" || u.User != nil {
			return nil, fmt.Errorf("https endpoint %q: want https://host:port", m.HTTPS)
		}
		out = append(out, endpoint{"https", u.Hostname(), net.JoinHostPort(strings.ToLower(u.Hostname()), u.Port())})
	}
	return out, nil
}
