package interop

import (
	"testing"

	"sitebox/internal/x509grid/x509test"
)

// gsiProxies are the proxy files the gsi tests present, made from the
// shared test grid (gridPKI: RSA keys, as gsi signs with them, of 2048
// bits, as OpenSSL's TLS wants for roots://) with the grid's own tools,
// by kind: alice's VOMS proxy of testvo ("voms"), a limited one, an
// expired one, one of othervo, a plain RFC 3820 proxy without VOMS
// attributes, a proxy with her name signed by another key than her
// certificate's ("forged"), the revoked user's VOMS proxy, and a proxy of
// a user of the CA the servers do not know ("unknown CA").
func gsiProxies(t *testing.T, p *x509test.PKI) map[string]string {
	t.Helper()
	b := p.Scratch(t)
	proxies := map[string]string{
		"voms":       p.VOMSProxyOf(b, p.Alice, nil).Chain,
		"limited":    p.VOMSProxyOf(b, p.Alice, nil, "-limited").Chain,
		"expired":    p.VOMSProxyOf(b, p.Alice, nil, "-hours", "1", "-pastproxy", "2:00").Chain,
		"othervo":    b.VOMSProxy(p.Alice, p.VOMS2, p.CADir, x509test.OtherVO, x509test.VOMS2Host, []string{x509test.OtherFQAN}).Chain,
		"plain":      b.GlobusProxy(p.Alice, p.CADir, "-rfc").Chain,
		"revoked":    p.VOMSProxyOf(b, p.Mallory, nil).Chain,
		"unknown CA": b.RSAProxy(p.Eve, "proxy").Chain,
	}
	// The impostor holds alice's name (from another CA) and its own key:
	// the proxy it signs is sent with alice's real certificate as issuer.
	forged := b.RSAProxy(p.Impostor, "proxy")
	proxies["forged"] = b.Cat(b.Unique("forged")+".pem", forged.Cert, forged.Key, p.Alice.Cert)
	b.OK(t)
	return proxies
}
