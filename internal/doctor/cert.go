package doctor

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sitebox/internal/config"
)

// checkCertificate looks at the certificate the box serves https:// and
// roots:// with: is it in date, and is it for the name clients use.
func checkCertificate(_ context.Context, cfg *config.Config, o *Options) []Check {
	if (cfg.HTTPS.Addr == config.Off || cfg.HTTPS.PlainHTTP) && (cfg.Root.Addr == config.Off || !cfg.Root.TLSEnabled()) {
		return []Check{{Name: "certificate", Status: StatusSkip, Summary: "neither https:// nor roots:// is served"}}
	}
	path, generated := servedCertFile(cfg)
	c := Check{Name: path}
	data, err := os.ReadFile(path)
	if generated && errors.Is(err, os.ErrNotExist) {
		c.Status, c.Summary = StatusOK, "no certificate yet: the box makes a self-signed one at its first start"
		return []Check{c}
	}
	cert, err := parseCert(data, err)
	if err != nil {
		c.Status, c.Summary = StatusError, err.Error()
		c.Explain = "Without a certificate the box cannot serve https:// or roots://."
		c.Fix = "Point [https] cert at the PEM certificate (and key at its key), or remove both to have the box make a self-signed one."
		return []Check{c}
	}
	out := []Check{certDates(c, cert, generated, o.Now())}
	ls := listeners(cfg, o.Hostname)
	hosts, _ := advertisedHosts(ls)
	for _, h := range hosts {
		if err := cert.VerifyHostname(h); err != nil {
			out = append(out, Check{Name: path, Status: StatusWarn,
				Summary: fmt.Sprintf("clients connect to %s, but the certificate is %s", h, certNames(cert)),
				Explain: "Clients check that the certificate names the host they connect to, and refuse it otherwise (curl: \"no alternative certificate subject name matches\").",
				Fix:     certNameFix(h, generated)})
		}
	}
	if cert.CheckSignatureFrom(cert) == nil {
		out[0].Summary += "; self-signed"
		out[0].Explain = strings.TrimSpace(out[0].Explain + " " + "No client trusts a self-signed certificate by itself; give it to them: curl --cacert FILE, for xrdcp X509_CERT_DIR with it under its hash, for other boxes [advertise] ca or [auth] ca.")
		if out[0].Fix == "" {
			out[0].Fix = "For a box serving the grid, get a host certificate from your grid CA and set [https] cert and key."
		}
	}
	return out
}

// parseCert decodes the first certificate of a PEM file.
func parseCert(data []byte, readErr error) (*x509.Certificate, error) {
	if readErr != nil {
		return nil, fmt.Errorf("cannot read the certificate: %w", readErr)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM certificate in the file")
		}
		if b.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("the certificate does not parse: %w", err)
			}
			return cert, nil
		}
	}
}

// certDates grades the validity period against now.
func certDates(c Check, cert *x509.Certificate, generated bool, now time.Time) Check {
	renew := "Get a new certificate from your CA and replace the file; restart the box."
	if generated {
		renew = "Restart the box: it replaces its self-signed certificate when a week or less is left (or delete cert.pem and key.pem in " + filepath.Dir(c.Name) + ")."
	}
	left := cert.NotAfter.Sub(now)
	switch {
	case left <= 0:
		c.Status = StatusError
		c.Summary = fmt.Sprintf("expired on %s (%s ago)", cert.NotAfter.Format(time.DateOnly), days(-left))
		c.Explain = "Every client refuses an expired certificate: https:// and roots:// reads fail with a certificate error, and tokens cannot be sent."
		c.Fix = renew
	case now.Before(cert.NotBefore):
		c.Status = StatusError
		c.Summary = fmt.Sprintf("not valid until %s", cert.NotBefore.Format(time.RFC3339))
		c.Explain = "Clients refuse a certificate that is not yet valid; usually this box's clock is behind."
		c.Fix = "Check the clock (`timedatectl`) and keep it synchronised (chrony or systemd-timesyncd)."
	case left < config.HostCertWarn:
		c.Status = StatusWarn
		c.Summary = fmt.Sprintf("expires on %s, in %s", cert.NotAfter.Format(time.DateOnly), days(left))
		c.Explain = "When it expires every client refuses the box's https:// and roots://."
		c.Fix = renew
	default:
		c.Status = StatusOK
		c.Summary = fmt.Sprintf("valid until %s (%s left)", cert.NotAfter.Format(time.DateOnly), days(left))
	}
	return c
}

func days(d time.Duration) string {
	if d < 48*time.Hour {
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%d days", int(math.Round(d.Hours()/24)))
}

func certNameFix(host string, generated bool) string {
	if generated {
		return fmt.Sprintf("The self-signed certificate is made for this machine's names; with a public name set [https] cert and key to a certificate for %s, or advertise a name the certificate has.", host)
	}
	if net.ParseIP(host) != nil {
		return fmt.Sprintf("Advertise the box by a name in its certificate instead of the address %s ([advertise] root_url, https_url).", host)
	}
	return fmt.Sprintf("Get a certificate that includes %s (as a subject alternative name), or advertise a name the certificate has.", host)
}
