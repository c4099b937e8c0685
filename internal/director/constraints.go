package director

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
)

// NameConstraints are the federation's names ([director] ca_domains and
// ca_networks). The CA certificate carries them as X.509 name
// constraints, so a certificate the CA signs for any other name does not
// verify, and approve refuses such names before signing. The zero value
// constrains nothing.
type NameConstraints struct {
	Domains  []string     // permitted DNS subtrees: the domain and every name below it
	Networks []*net.IPNet // permitted address ranges
}

// ErrCAConstraints is a CA certificate whose name constraints are not
// those configured: `sitebox federation reissue-ca` brings it in line.
var ErrCAConstraints = errors.New("the federation CA's name constraints differ from [director] ca_domains and ca_networks")

// ParseNameConstraints reads ca_domains and ca_networks.
func ParseNameConstraints(domains, networks []string) (NameConstraints, error) {
	var c NameConstraints
	for _, d := range domains {
		d = strings.ToLower(d)
		if strings.Contains(d, "*") || strings.HasPrefix(d, ".") {
			return c, fmt.Errorf("ca_domains: %q: write the domain itself (\"example.org\" covers its hosts and subdomains)", d)
		}
		if err := checkDNSName(d); err != nil {
			return c, fmt.Errorf("ca_domains: %w", err)
		}
		if !slices.Contains(c.Domains, d) {
			c.Domains = append(c.Domains, d)
		}
	}
	for _, s := range networks {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return c, fmt.Errorf("ca_networks: %q is not an address range like \"192.0.2.0/24\"", s)
		}
		c.Networks = append(c.Networks, n)
	}
	return c, nil
}

// IsZero reports whether c constrains nothing.
func (c NameConstraints) IsZero() bool { return len(c.Domains) == 0 && len(c.Networks) == 0 }

// String names the constraints for messages.
func (c NameConstraints) String() string {
	if c.IsZero() {
		return "none"
	}
	names := slices.Clone(c.Domains)
	for _, n := range c.Networks {
		names = append(names, n.String())
	}
	return strings.Join(names, ", ")
}

// Permits says why host lies outside c, nil if it lies within.
func (c NameConstraints) Permits(host string) error {
	if c.IsZero() {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil {
		for _, n := range c.Networks {
			if n.Contains(ip) {
				return nil
			}
		}
		if len(c.Networks) == 0 {
			return fmt.Errorf("%q is an address, and the federation's names are domains only ([director] ca_networks is not set)", host)
		}
		return fmt.Errorf("%q is outside the federation's address ranges ([director] ca_networks: %s)", host, c.String())
	}
	h := strings.ToLower(host)
	for _, d := range c.Domains {
		if h == d || strings.HasSuffix(h, "."+d) {
			return nil
		}
	}
	if len(c.Domains) == 0 {
		return fmt.Errorf("%q is a name, and the federation's names are addresses only ([director] ca_domains is not set)", host)
	}
	return fmt.Errorf("%q is outside the federation's domains ([director] ca_domains: %s)", host, strings.Join(c.Domains, ", "))
}

// apply puts c into a CA certificate template. A kind of name c does not
// list is excluded whole, so a CA constrained to domains signs no
// address (and one constrained to addresses no name): RFC 5280 would
// leave an unlisted kind unconstrained.
func (c NameConstraints) apply(tmpl *x509.Certificate) {
	if c.IsZero() {
		return
	}
	tmpl.PermittedDNSDomainsCritical = true // RFC 5280: MUST be critical
	tmpl.PermittedDNSDomains = slices.Clone(c.Domains)
	tmpl.PermittedIPRanges = slices.Clone(c.Networks)
	if len(c.Domains) == 0 {
		tmpl.ExcludedDNSDomains = []string{""} // the empty name: every name
	}
	if len(c.Networks) == 0 {
		tmpl.ExcludedIPRanges = []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		}
	}
}

// carriedBy reports whether cert's name constraints are exactly c's.
func (c NameConstraints) carriedBy(cert *x509.Certificate) bool {
	var want x509.Certificate
	c.apply(&want)
	nets := func(ns []*net.IPNet) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.String())
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	return slices.Equal(sorted(want.PermittedDNSDomains), sorted(cert.PermittedDNSDomains)) &&
		slices.Equal(sorted(want.ExcludedDNSDomains), sorted(cert.ExcludedDNSDomains)) &&
		slices.Equal(nets(want.PermittedIPRanges), nets(cert.PermittedIPRanges)) &&
		slices.Equal(nets(want.ExcludedIPRanges), nets(cert.ExcludedIPRanges))
}

// constraintsOf are the constraints a CA certificate carries, as
// configured (the exclusions apply adds are implied).
func constraintsOf(cert *x509.Certificate) NameConstraints {
	return NameConstraints{Domains: slices.Clone(cert.PermittedDNSDomains), Networks: slices.Clone(cert.PermittedIPRanges)}
}
