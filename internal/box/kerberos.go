package box

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"sitebox/internal/krb5auth"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// buildKerberos loads [auth.kerberos]: the keytab and realm mappings,
// and the replay cache in the state dir (so no restart reopens the door
// to a captured credential). A box without it takes no Kerberos
// credentials.
func (b *Box) buildKerberos() error {
	k := &b.cfg.Auth.Kerberos
	if !k.Enabled() {
		return nil
	}
	kc := k.Krb5(b.cfg.Auth.ClockSkew)
	kc.ReplayCache = krb5auth.ReplayCacheFile(b.cfg.Server.StateDir)
	a, err := krb5auth.New(kc, b.log)
	if err != nil {
		return fmt.Errorf("auth.kerberos: %w", err)
	}
	b.krb5 = a
	b.closers = append(b.closers, a.Close)
	return nil
}

// withKerberos hands the Kerberos verifier to the frontends' configs
// (left nil, not a typed nil, when Kerberos is off).
func (b *Box) withKerberos(rc *xrdserver.Config, wc *webdav.Config) {
	if b.krb5 == nil {
		return
	}
	if rc != nil {
		rc.Kerberos = b.krb5
	}
	if wc != nil {
		wc.Kerberos = b.krb5
	}
}

// jobsNegotiate authenticates a job API request by Kerberos (nil when
// Kerberos is off).
func (b *Box) jobsNegotiate() func(r *http.Request) (*store.Identity, error) {
	if b.krb5 == nil {
		return nil
	}
	return func(r *http.Request) (*store.Identity, error) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		return b.krb5.VerifyNegotiate(tok)
	}
}

// jobsVerify checks a job API bearer token; a box that takes only
// Kerberos refuses every token, naming why.
func (b *Box) jobsVerify() func(ctx context.Context, raw string) (*store.Identity, error) {
	if b.tokens != nil {
		return b.tokens.Verify
	}
	return func(context.Context, string) (*store.Identity, error) {
		return nil, errors.New("this box takes no bearer tokens")
	}
}

// isKerberos reports whether id is a Kerberos user: a local user of a
// realm this box maps, so its jobs are of the local class.
func isKerberos(id *store.Identity) bool {
	return id != nil && strings.HasPrefix(id.Issuer, krb5auth.IssuerPrefix)
}
