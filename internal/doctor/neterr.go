package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// failure kinds, each with its own explanation.
const (
	failRefused     = "refused"
	failTimeout     = "timeout"
	failUnreachable = "unreachable"
	failDNS         = "dns"
	failUnknownCA   = "unknown-ca"
	failHostname    = "hostname"
	failCertTime    = "cert-time"
	failNotTLS      = "not-tls"
	failOther       = "other"
)

// classify names what kind of failure err is and says it in plain words
// for a summary. Refused and timed out differ in what they reveal: a
// refusal comes back from the host (nothing listens, or a firewall
// rejects), silence means something on the way drops the packets.
func classify(err error, timeout time.Duration) (kind, words string) {
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return failRefused, "connection refused"
	case errors.As(err, &dnsErr):
		return failDNS, fmt.Sprintf("the name %s does not resolve", dnsErr.Name)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return failUnreachable, "no route to the host"
	case errors.As(err, &unknownCA):
		return failUnknownCA, "its certificate is signed by an authority this box does not trust"
	case errors.As(err, &hostErr):
		return failHostname, fmt.Sprintf("its certificate is not for %s (%s)", hostErr.Host, certNames(hostErr.Certificate))
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return failCertTime, "its certificate is expired or not yet valid at this box's time"
	case errors.As(err, &recErr):
		return failNotTLS, "it answers in plain HTTP, not HTTPS"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return failTimeout, fmt.Sprintf("no answer within %s", timeout)
	}
	return failOther, err.Error()
}

// certNames lists the names a certificate is valid for.
func certNames(c *x509.Certificate) string {
	if c == nil {
		return "no names"
	}
	var names []string
	names = append(names, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, "CN "+c.Subject.CommonName)
	}
	if len(names) == 0 {
		return "no names"
	}
	return "valid for " + strings.Join(names, ", ")
}
