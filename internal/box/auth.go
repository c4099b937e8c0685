package box

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/config"
	"sitebox/internal/store"
)

// IssuerDir is where the site issuer's key lives, below the state dir.
const IssuerDir = "issuer"

// buildAuth makes the token verifier (the trusted issuers, and the site
// issuer when this box is one) and the namespace policy. A box without
// [auth] verifies nothing and allows everything, as before.
func (b *Box) buildAuth() error {
	a := &b.cfg.Auth
	p, err := a.Policy()
	if err != nil {
		return err
	}
	b.policy = p
	if b.x509, err = a.X509.X509(); err != nil {
		return err
	}
	if !a.Enabled() {
		return nil
	}
	if _, err := a.VerifierConfig(); err != nil {
		return err
	}
	if a.SiteIssuer {
		is, err := auth.LoadIssuer(filepath.Join(b.cfg.Server.StateDir, IssuerDir, auth.KeyFileName), SiteIssuerURL(b.cfg))
		if err != nil {
			return fmt.Errorf("auth.site_issuer: %w (make the key with `sitebox token keygen`)", err)
		}
		b.issuer = is
		// The box trusts its own tokens through a JWKS file: no fetch.
		// Beside it, the issuer URL, so `sitebox token issue` signs for
		// the same iss without being told.
		dir := filepath.Join(b.cfg.Server.StateDir, IssuerDir)
		if err := os.WriteFile(b.siteJWKS(), is.JWKS(), 0o644); err != nil {
			return fmt.Errorf("auth.site_issuer: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, IssuerURLFile), []byte(is.URL()+"\n"), 0o644); err != nil {
			return fmt.Errorf("auth.site_issuer: %w", err)
		}
	}
	v, err := b.newVerifier(a)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	b.tokens = newTokenSwitch(v, b.log)
	b.add(b.tokens)
	return nil
}

// buildAuthenticator makes the one entry point of credentials from the
// verifiers buildAuth and buildKerberos made (each left out, not a typed
// nil, when the box takes no credential of its kind).
func (b *Box) buildAuthenticator() {
	var v auth.Verifiers
	if b.tokens != nil {
		v.Tokens = b.tokens
	}
	if b.krb5 != nil {
		v.Kerberos = b.krb5
	}
	if b.x509 != nil {
		v.X509 = b.x509
	}
	b.authn = auth.NewAuthenticator(v, b.log)
}

// siteJWKS is the file of the site issuer's public keys.
func (b *Box) siteJWKS() string {
	return filepath.Join(b.cfg.Server.StateDir, IssuerDir, "jwks.json")
}

// newVerifier makes a token verifier for the issuers of a, and for the
// box's own site issuer when it is one.
func (b *Box) newVerifier(a *auth.Settings) (*auth.Verifier, error) {
	vc, err := a.VerifierConfig()
	if err != nil {
		return nil, err
	}
	if b.issuer != nil {
		vc.Issuers = append(vc.Issuers, auth.IssuerConfig{Issuer: b.issuer.URL(), JWKSFile: b.siteJWKS(), VOs: a.SiteIssuerVOs})
	}
	return auth.NewVerifier(vc, b.log)
}

// guard puts the namespace policy in front of st, unless it allows all.
func (b *Box) guard(st store.Store) store.Store {
	if b.policy == nil || b.policy.AllowsAll() {
		return st
	}
	return auth.NewGuard(st, b.policy, b.log)
}

// withIssuer serves the site issuer's discovery document and JWKS beside
// the namespace, so other boxes can trust this one's tokens.
func (b *Box) withIssuer(mux *http.ServeMux) {
	if b.issuer != nil {
		mux.Handle("/.well-known/", b.issuer.Handler())
	}
}

// IssuerURLFile, in the issuer dir, holds the URL a running site issuer
// signs for.
const IssuerURLFile = "url"

// SiteIssuerURL is the site issuer's `iss`: [auth] issuer_url, else what
// the box last started with wrote in its state dir, else
// https://<hostname>:<https port>.
func SiteIssuerURL(cfg *config.Config) string {
	if u := cfg.Auth.IssuerURL; u != "" {
		return strings.TrimSuffix(u, "/")
	}
	if b, err := os.ReadFile(filepath.Join(cfg.Server.StateDir, IssuerDir, IssuerURLFile)); err == nil {
		if u := strings.TrimSpace(string(b)); u != "" {
			return u
		}
	}
	host, _ := os.Hostname()
	_, port, err := net.SplitHostPort(cfg.HTTPS.Addr)
	if err != nil || port == "" {
		port = "8443"
	}
	return "https://" + net.JoinHostPort(host, port)
}
