package config

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"time"
)

// HostCertWarn is how early an expiring host certificate is announced:
// enough to get a new one from a grid CA, which can take a week.
const HostCertWarn = 14 * 24 * time.Hour

// Warnings names what is allowed but probably not meant, or soon wrong:
// cache routes no namespace rule covers, a host certificate near its
// end, a robot proxy expired or near its end, and X.509 trust stores that refuse credentials (no CA, CRLs out of
// date under the CRL mode, a VO a namespace needs missing from the
// vomsdir).
func (c *Config) Warnings() []Problem {
	ps := c.CacheWarnings()
	ps = append(ps, c.hostCertWarnings(time.Now())...)
	ps = append(ps, c.proxyWarnings(time.Now())...)
	for _, f := range c.Auth.X509Findings(time.Now()) {
		ps = append(ps, Problem{Key: f.Key, Msg: f.Msg + ". " + f.Fix})
	}
	return ps
}

// hostCertWarnings names an [https] cert that ends within HostCertWarn
// of now, or has ended.
func (c *Config) hostCertWarnings(now time.Time) []Problem {
	if c.HTTPS.Cert == "" || c.HTTPS.Addr == Off {
		return nil
	}
	data, err := os.ReadFile(c.HTTPS.Cert)
	if err != nil {
		return nil // Validate names an unreadable file
	}
	b, _ := pem.Decode(data)
	if b == nil {
		return nil
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil
	}
	left := cert.NotAfter.Sub(now)
	switch {
	case left <= 0:
		return []Problem{{Key: "https.cert", Msg: fmt.Sprintf("%s expired on %s: every client refuses the box's https:// and roots://; get a new certificate from your CA", c.HTTPS.Cert, cert.NotAfter.Format(time.DateOnly))}}
	case left < HostCertWarn:
		return []Problem{{Key: "https.cert", Msg: fmt.Sprintf("%s expires on %s, in %d days: get a new certificate from your CA now", c.HTTPS.Cert, cert.NotAfter.Format(time.DateOnly), int(left.Hours()/24))}}
	}
	return nil
}
