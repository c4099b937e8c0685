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
// certificate's ("forged"), the revoked user's VOMS proxy, a proxy of
// a user of the CA the servers do not know ("unknown CA"), and those of
// refusedGridProxies.
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
	for kind, file := range refusedGridProxies(p, b, b.RSAProxy) {
		proxies[kind] = file
	}
	b.OK(t)
	return proxies
}

// refusedGridProxies are the proxies whose one flaw is in the user
// certificate, the attribute certificate or the proxy chain, made as
// internal/x509grid's own tests make them (proxy is the Builder's
// OpenSSLProxy or RSAProxy), by kind: a valid proxy of the expired
// user ("expired user"), a VOMS proxy whose AC expired ("expired AC"),
// one whose AC is signed by another key than its VOMS server
// certificate's ("broken AC"), one of testvo signed by the VOMS server
// the vomsdir lists for othervo only ("unlisted AC"), and a proxy signed
// by a VOMS proxy of path length 0 ("path length": with testvo's
// attributes, so a server that does not count proxies reads with it).
func refusedGridProxies(p *x509test.PKI, b *x509test.Builder, proxy func(x509test.Cred, string, ...string) x509test.Cred) map[string]string {
	forgedVOMS := x509test.Cred{Cert: p.VOMS.Cert, Key: p.VOMS2.Key}
	return map[string]string{
		"expired user": proxy(p.Old, "proxy").Chain,
		"expired AC":   p.VOMSProxyOf(b, p.Alice, nil, "-vomslife", "1", "-pastac", "2:00").Chain,
		"broken AC":    b.VOMSProxy(p.Alice, forgedVOMS, p.CADir, x509test.TestVO, x509test.VOMSHost, []string{x509test.TestFQAN}).Chain,
		"unlisted AC":  b.VOMSProxy(p.Alice, p.VOMS2, p.CADir, x509test.TestVO, x509test.VOMS2Host, []string{x509test.TestFQAN}).Chain,
		"path length":  proxy(p.VOMSProxyOf(b, p.Alice, nil, "-path-length", "0"), "proxy").Chain,
	}
}
