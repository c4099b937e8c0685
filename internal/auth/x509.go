package auth

import (
	"crypto/x509"
	"fmt"
	"slices"
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
// frontend that takes them. It is immutable and safe for concurrent use.
type X509 struct {
	v *x509grid.Verifier
}

// X509 builds the authenticator the settings describe (defaults applied),
// or nil without an [auth.x509] section.
func (x *X509Settings) X509() (*X509, error) {
	if x == nil {
		return nil, nil
	}
	v, err := x.Verifier()
	if err != nil {
		return nil, fmt.Errorf("auth.x509: %w", err)
	}
	return &X509{v: v}, nil
}

// Identify verifies chain (as presented, leaf first) at time at and
// returns the identity it proves, with the verification's result. The
// caller must have proven that the client holds the leaf's key (the TLS
// handshake, gsi's signed exchange). The identity is the user's DN under
// "x509:" and the user's CA; its groups are the FQAN groups of the VOs
// whose attribute certificates a VOMS server the vomsdir lists for that
// VO signed (others are ignored: VOs are bound to their servers as they
// are to token issuers); it expires with the first certificate or
// attribute certificate to end.
func (a *X509) Identify(chain []*x509.Certificate, at time.Time) (*store.Identity, *x509grid.Result, error) {
	res, err := a.v.Verify(chain, at)
	if err != nil {
		return nil, nil, err
	}
	id := &store.Identity{Subject: res.Subject, Issuer: X509IssuerPrefix + res.Issuer, Expires: res.Expires}
	for _, vo := range res.VOs {
		for _, f := range vo.FQANs {
			if !slices.Contains(id.Groups, f.Group) {
				id.Groups = append(id.Groups, f.Group)
			}
		}
	}
	return id, res, nil
}
