package x509grid

import (
	"path/filepath"
	"time"
)

// refusedChains are chains refused for their proxies and end-entity
// certificates.
func refusedChains() []chainCase {
	return []chainCase{
		{name: "unknown CA",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Eve, "proxy").Chain },
			want: ErrUnknownCA, wantPos: 1, wantText: "its issuer " + otherDN + " is not in the CA directory"},
		{name: "expired user certificate",
			make: func(fx *fixture, b *builder) string { return fx.Old.Chain },
			want: ErrExpired, wantPos: 0, wantText: oldDN + "): expired at"},
		{name: "proxy of an expired user certificate",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Old, "proxy").Chain },
			want: ErrExpired, wantPos: 1, wantText: oldDN + "): expired at"},
		{name: "user certificate not yet valid",
			make: func(fx *fixture, b *builder) string { return fx.Future.Chain },
			want: ErrNotYetValid, wantPos: 0, wantText: "not yet valid (valid from"},
		{name: "expired proxy",
			make: func(fx *fixture, b *builder) string {
				return b.VOMSProxy(fx.Alice, fx.VOMS, fx.CADir, testVO, vomsHost, []string{testFQAN}, "-hours", "1", "-pastproxy", "2:00").Chain
			},
			want: ErrExpired, wantPos: 0, wantText: "expired at"},
		{name: "revoked user",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Mallory, "proxy").Chain },
			want: ErrRevoked, wantPos: 1, wantText: "revoked at"},
		{name: "revoked user certificate alone",
			make: func(fx *fixture, b *builder) string { return fx.Mallory.Chain },
			want: ErrRevoked, wantPos: 0, wantText: "(keyCompromise) by the CRL of " + rootDN},
		{name: "proxy signed by another key than its issuer's",
			make: func(fx *fixture, b *builder) string {
				// Signed by the impostor (Alice's name, another CA, another
				// key), presented with Alice's certificate.
				p := b.OpenSSLProxy(fx.Impostor, "proxy")
				return b.Cat("forged.pem", p.Cert, p.Key, fx.Alice.Cert)
			},
			want: ErrSignature, wantPos: 0, wantText: "verification error"},
		{name: "proxy subject not issuer plus CN",
			make: func(fx *fixture, b *builder) string {
				return b.OpenSSLProxy(fx.Alice, "proxy", bobDN+"/CN=12345").Chain
			},
			want: ErrProxy, wantPos: 0, wantText: "not its issuer's name plus one CN"},
		{name: "proxy subject issuer plus another attribute",
			make: func(fx *fixture, b *builder) string {
				return b.OpenSSLProxy(fx.Alice, "proxy", aliceDN+"/OU=12345").Chain
			},
			want: ErrProxy, wantPos: 0, wantText: "not its issuer's name plus one CN"},
		{name: "proxy path length exceeded",
			make: func(fx *fixture, b *builder) string {
				return b.OpenSSLProxy(b.OpenSSLProxy(fx.Alice, "proxy_pathlen0"), "proxy").Chain
			},
			want: ErrPathLength, wantPos: 0, wantText: "one proxy more than the proxyCertInfo path lengths above it allow"},
		{name: "CA certificate issuing a proxy",
			make: func(fx *fixture, b *builder) string {
				ca := cred{Cert: fx.Root.Cert, Key: fx.Root.Key, Chain: fx.Root.Cert, Subject: rootDN}
				return b.OpenSSLProxy(ca, "proxy").Chain
			},
			want: ErrNotEndEntity, wantPos: 1, wantText: "cannot issue proxies"},
		{name: "CA proxy without the CA certificate",
			make: func(fx *fixture, b *builder) string {
				ca := cred{Cert: fx.Inter.Cert, Key: fx.Inter.Key, Chain: fx.Inter.Cert, Subject: interDN}
				p := b.OpenSSLProxy(ca, "proxy")
				return b.Cat("alone.pem", p.Cert, p.Key)
			},
			want: ErrProxy, wantPos: 0, wantText: "no end-entity certificate follows"},
		{name: "independent proxy",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy_independent").Chain },
			want: ErrProxy, wantPos: 0, wantText: "carries none of its issuer's rights",
			differs: map[string]string{peerOpenSSL: "OpenSSL leaves proxy policies to the application", peerVOMSVerify: "likewise"}},
		{name: "proxyCertInfo not critical",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy_noncritical").Chain },
			want: ErrProxy, wantPos: 0, wantText: "not marked critical",
			differs: map[string]string{peerOpenSSL: "OpenSSL takes a non-critical proxyCertInfo (RFC 3820 3.8 says it MUST be critical)", peerVOMSVerify: "likewise"}},
		{name: "proxy with keyCertSign",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy_certsign").Chain },
			want: ErrProxy, wantPos: 0, wantText: "keyCertSign",
			differs: map[string]string{peerOpenSSL: "OpenSSL does not check a proxy's own key usage (RFC 3820 3.7)", peerVOMSVerify: "likewise"}},
		{name: "unknown critical extension",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy_unknown_critical").Chain },
			want: ErrCriticalExtension, wantPos: 0, wantText: "1.2.3.4.5",
			differs: map[string]string{peerVOMSVerify: "VOMS' proxy callback forgives unhandled critical extensions"}},
		{name: "Globus GT2 proxy by default",
			make: func(fx *fixture, b *builder) string { return b.GlobusProxy(fx.Alice, fx.CADir, "-old").Chain },
			want: ErrLegacyProxy, wantPos: 0, wantText: "CN=proxy",
			differs: map[string]string{peerVOMSVerify: "VOMS accepts GT2 proxies, as this package does with AllowLegacyProxies"}},
		{name: "Globus GT3 draft proxy",
			make:   func(fx *fixture, b *builder) string { return b.GlobusProxy(fx.Alice, fx.CADir, "-draft").Chain },
			config: func(c *Config) { c.AllowLegacyProxies = true },
			want:   ErrLegacyProxy, wantPos: 0, wantText: "GT3"},
	}
}

// refusedByTrust are chains refused for their CAs and CRLs.
func refusedByTrust() []chainCase {
	return []chainCase{
		{name: "no CRL, crl = use",
			make:   func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy").Chain },
			caDir:  noCRLDir,
			config: func(c *Config) { c.CRL = CRLUse },
			want:   ErrCRL, wantPos: 1, wantText: rootDN + " has no CRL in the CA directory (crl = use)",
			differs: map[string]string{peerVOMSVerify: "VOMS checks CRLs only where there are some, as crl = try does"}},
		{name: "expired CRL, crl = require",
			make:   func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy").Chain },
			caDir:  expiredCRLDir,
			config: func(c *Config) { c.CRL = CRLRequire },
			want:   ErrCRL, wantPos: 1, wantText: "the CRL of " + rootDN + " expired at"},
		{name: "CRL not signed by its CA",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy").Chain },
			caDir: func(fx *fixture, b *builder) string {
				// A CA with the root's name and another key signs the CRL.
				fake := b.NewRootCA("fake-root", rootDN, false)
				dir := b.Path("certificates")
				fx.installCADir(dir, b.CRL(fake), b.CRL(fx.Inter))
				return dir
			},
			want: ErrCRL, wantPos: 1, wantText: "is not usable"},
		{name: "CA directory lacking the intermediate CA",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Carol, "proxy").Chain },
			caDir: func(fx *fixture, b *builder) string {
				dir := b.Path("certificates")
				b.InstallCA(dir, []*testCA{fx.Root})
				return dir
			},
			opensslFlags: []string{},
			want:         ErrUnknownCA, wantPos: 1, wantText: "its issuer " + interDN + " is not in the CA directory",
			differs: map[string]string{peerOpenSSL: "OpenSSL trusts an intermediate the client sends (-untrusted) up to a root it knows; here CAs come from the CA directory only", peerVOMSVerify: "likewise"}},
		{name: "expired intermediate CA in the CA directory",
			make:  func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Carol, "proxy").Chain },
			caDir: func(fx *fixture, b *builder) string { return renewedInterDir(fx, b, false) },
			want:  ErrExpired, wantPos: 2, wantText: interDN + ", from the CA directory): expired at"},
	}
}

// renewedInterDir is a CA directory holding the intermediate CA as
// issued again with the same key but expired, and, with current, the
// current one too (<hash>.0 and <hash>.1).
func renewedInterDir(fx *fixture, b *builder, current bool) string {
	expired := b.Path("inter-expired.pem")
	b.Run("openssl", "ca", "-batch", "-config", fx.Root.Conf, "-extensions", "v3_ca", "-preserveDN",
		"-startdate", ago(72*time.Hour), "-enddate", ago(time.Hour), "-in", fx.Path("inter.csr"), "-out", expired)
	dir := b.Path("certificates")
	b.InstallCA(dir, []*testCA{fx.Root}, b.CRL(fx.Root), b.CRL(fx.Inter))
	hash := b.Hash("x509", fx.Inter.Cert)
	b.CopyTo(expired, filepath.Join(dir, hash+".0"))
	if current {
		b.CopyTo(fx.Inter.Cert, filepath.Join(dir, hash+".1"))
	}
	return dir
}
