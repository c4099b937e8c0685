package box

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
)

// buildX509 readies what a box taking X.509 credentials ([auth.x509])
// needs beside the authenticator buildAuth made: the https listeners'
// client certificate verification, shared with the job API and the
// dashboard, and the refresh of the CA directory, vomsdir and mapfiles.
func (b *Box) buildX509() error {
	if b.x509 == nil {
		return nil
	}
	b.certs = webdav.NewClientCerts(b.authn, b.log.With("component", "https"))
	b.reportX509()
	b.add(roleFuncs{run: func(ctx context.Context) error {
		t := time.NewTicker(b.x509.Refresh())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				b.reloadX509()
			}
		}
	}})
	return nil
}

// reloadX509 reads the trust stores and mapfiles again (every refresh,
// and on a reload of the config), keeping the old ones on a failure.
func (b *Box) reloadX509() {
	if b.x509 == nil {
		return
	}
	if err := b.x509.Reload(); err != nil {
		b.log.Error("cannot read the X.509 trust stores again; still using the previous reading", "err", err)
		return
	}
	b.reportX509()
}

// reportX509 logs what of the trust stores refuses credentials (an
// empty CA directory, CRLs that refuse every user of a CA, a VO a
// namespace needs missing from the vomsdir) or was skipped.
func (b *Box) reportX509() {
	log := b.log.With("component", "x509")
	for _, f := range b.x509.Findings(b.cfg.Auth.Namespaces, time.Now()) {
		log.Warn(f.Msg, "key", f.Key, "fix", f.Fix)
	}
}

// httpsTLS is the https listeners' TLS config: the box's certificate,
// asking clients for theirs when the box takes X.509 credentials. It
// asks and never requires (token and anonymous clients have none) and
// lets TLS verify nothing but the client's possession of the leaf's key:
// Go's verifier refuses proxy certificates, so the chain is verified by
// auth.X509 in the request path (webdav.ClientCerts). roots:// keeps tc.
func (b *Box) httpsTLS(tc *tls.Config) *tls.Config {
	if b.certs == nil || tc == nil {
		return tc
	}
	c := tc.Clone()
	c.ClientAuth = tls.RequestClientCert
	return c
}

// withClientCerts has an https server verify client certificates.
func (b *Box) withClientCerts(srv *http.Server, wc *webdav.Config) {
	if b.certs == nil {
		return
	}
	srv.ConnContext = b.certs.ConnContext
	wc.Certificates = b.certs
}

// jobsCertificate authenticates a job API request by its client
// certificate; nil on a box without [auth.x509].
func (b *Box) jobsCertificate() func(r *http.Request) (*store.Identity, error) {
	if b.certs == nil {
		return nil
	}
	return func(r *http.Request) (*store.Identity, error) {
		id, _, err := b.certs.Identity(r)
		return id, err
	}
}

// isSiteUser reports whether id is an X.509 user a DN rule or the
// grid-mapfile names a local user for: a person of the site, whose jobs
// are of the local class as a Kerberos user's are.
func (b *Box) isSiteUser(id *store.Identity) bool {
	if b.x509 == nil {
		return false
	}
	_, ok := b.x509.SiteUser(id)
	return ok
}

// certificateViewer is who a dashboard request's client certificate
// proves, for a request without a token: nil when it carries none.
func (b *Box) certificateViewer(r *http.Request) (*store.Identity, error) {
	if b.certs == nil {
		return nil, nil
	}
	id, _, err := b.certs.Identity(r)
	return id, err
}

// x509Operator says how an operator entry names an X.509 user, for
// messages.
func x509Operator(id *store.Identity) string {
	if !id.Is(auth.MethodX509) {
		return ""
	}
	return fmt.Sprintf(" (as [[auth.operator]] issuer = %q, subject = %q)", id.Issuer, strings.TrimSpace(id.Subject))
}
