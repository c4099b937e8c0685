package auth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// X509IssuerPrefix starts the Issuer of an identity proven with an X.509
// credential: "x509:" and the user's CA name, so a DN means one person
// only under the CA that vouches for it (job ownership, fair share and
// logs use the pair), and no token issuer's URL can be mistaken for it.
const X509IssuerPrefix = "x509:"

// X509 turns grid credentials — a proxy chain or an end-entity
// certificate, with VOMS attributes — into identities, for every
// frontend that takes them: the chain is verified against the CA
// directory and vomsdir, then the mapping rules and mapfiles give the
// user groups, scopes and perhaps a local user name. Reload reads the
// directories and mapfiles again. It is safe for concurrent use.
type X509 struct {
	settings X509Settings
	refresh  time.Duration
	state    atomic.Pointer[x509State]
}

// x509State is what one reading of the trust stores and mapfiles gave.
type x509State struct {
	v *x509grid.Verifier
	m *x509Mapping
}

// X509 builds the authenticator the settings describe (defaults applied),
// or nil without an [auth.x509] section.
func (x *X509Settings) X509() (*X509, error) {
	if x == nil {
		return nil, nil
	}
	a := &X509{settings: *x}
	a.settings.defaults(os.Getenv) // a Refresh of 0 would stop the ticker
	a.refresh = a.settings.Refresh.D()
	if err := a.Reload(); err != nil {
		return nil, err
	}
	return a, nil
}

// Reload reads the CA directory, the vomsdir and the mapfiles again. On
// an error the authenticator keeps what it had.
func (a *X509) Reload() error {
	v, err := a.settings.Verifier()
	if err != nil {
		return fmt.Errorf("auth.x509: %w", err)
	}
	m, ps := a.settings.mapping()
	if len(ps) > 0 {
		return errors.New(ps[0].String())
	}
	a.state.Store(&x509State{v: v, m: m})
	return nil
}

// Refresh is how often Reload should run ([auth.x509] refresh).
func (a *X509) Refresh() time.Duration { return a.refresh }

// Warnings lists the files of the CA directory and vomsdir the last
// reading skipped, and why.
func (a *X509) Warnings() []string { return a.state.Load().v.Warnings() }

// Status is the state of the CA directory as last read, judged at at.
func (a *X509) Status(at time.Time) x509grid.Status { return a.state.Load().v.Status(at) }

// Identify verifies chain (as presented, leaf first) at time at and
// returns the identity it proves, with the verification's result. The
// caller must have proven that the client holds the leaf's key (the TLS
// handshake, gsi's signed exchange). The identity is the user's DN under
// "x509:" and the user's CA; its groups are the FQAN groups of the VOs
// whose attribute certificates a VOMS server the vomsdir lists for that
// VO signed (others are ignored: VOs are bound to their servers as they
// are to token issuers) and those the matching rules grant; its scopes
// are the rules' (read scopes only, for a limited proxy); it expires
// with the first certificate or attribute certificate to end.
func (a *X509) Identify(chain []*x509.Certificate, at time.Time) (*store.Identity, *x509grid.Result, error) {
	st := a.state.Load()
	res, err := st.v.Verify(chain, at)
	if err != nil {
		return nil, nil, err
	}
	return st.m.identity(res), res, nil
}

// SiteUser reports the local user a DN rule or grid-mapfile line names
// for an X.509 identity: a person the site knows by name, whose jobs are
// a local user's, not a grid user's.
func (a *X509) SiteUser(id *store.Identity) (string, bool) {
	if !id.Is(MethodX509) {
		return "", false
	}
	u := a.state.Load().m.userByDN(id.Subject)
	return u, u != ""
}
