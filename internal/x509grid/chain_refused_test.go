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
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.eve, "proxy").chain },
			want: ErrUnknownCA, wantPos: 1, wantText: "its issuer " + otherDN + " is not in the CA directory"},
		{name: "expired user certificate",
			make: func(fx *fixture, b *builder) string { return fx.old.chain },
			want: ErrExpired, wantPos: 0, wantText: oldDN + "): expired at"},
		{name: "proxy of an expired user certificate",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.old, "proxy").chain },
			want: ErrExpired, wantPos: 1, wantText: oldDN + "): expired at"},
		{name: "user certificate not yet valid",
			make: func(fx *fixture, b *builder) string { return fx.future.chain },
			want: ErrNotYetValid, wantPos: 0, wantText: "not yet valid (valid from"},
		{name: "expired proxy",
			make: func(fx *fixture, b *builder) string {
				return b.vomsProxy(fx.alice, fx.voms, fx.caDir, testVO, vomsHost, []string{testFQAN}, "-hours", "1", "-pastproxy", "2:00").chain
			},
			want: ErrExpired, wantPos: 0, wantText: "expired at"},
		{name: "revoked user",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.mallory, "proxy").chain },
			want: ErrRevoked, wantPos: 1, wantText: "revoked at"},
		{name: "revoked user certificate alone",
			make: func(fx *fixture, b *builder) string { return fx.mallory.chain },
			want: ErrRevoked, wantPos: 0, wantText: "(keyCompromise) by the CRL of " + rootDN},
		{name: "proxy signed by another key than its issuer's",
			make: func(fx *fixture, b *builder) string {
				// Signed by the impostor (Alice's name, another CA, another
				// key), presented with Alice's certificate.
				p := b.opensslProxy(fx.impostor, "proxy")
				return b.cat("forged.pem", p.cert, p.key, fx.alice.cert)
			},
			want: ErrSignature, wantPos: 0, wantText: "verification error"},
		{name: "proxy subject not issuer plus CN",
			make: func(fx *fixture, b *builder) string {
				return b.opensslProxy(fx.alice, "proxy", bobDN+"/CN=12345").chain
			},
			want: ErrProxy, wantPos: 0, wantText: "not its issuer's name plus one CN"},
		{name: "proxy subject issuer plus another attribute",
			make: func(fx *fixture, b *builder) string {
				return b.opensslProxy(fx.alice, "proxy", aliceDN+"/OU=12345").chain
			},
			want: ErrProxy, wantPos: 0, wantText: "not its issuer's name plus one CN"},
		{name: "proxy path length exceeded",
			make: func(fx *fixture, b *builder) string {
				return b.opensslProxy(b.opensslProxy(fx.alice, "proxy_pathlen0"), "proxy").chain
			},
			want: ErrPathLength, wantPos: 0, wantText: "one proxy more than the proxyCertInfo path lengths above it allow"},
		{name: "CA certificate issuing a proxy",
			make: func(fx *fixture, b *builder) string {
				ca := cred{cert: fx.root.cert, key: fx.root.key, chain: fx.root.cert, subject: rootDN}
				return b.opensslProxy(ca, "proxy").chain
			},
			want: ErrNotEndEntity, wantPos: 1, wantText: "cannot issue proxies"},
		{name: "CA proxy without the CA certificate",
			make: func(fx *fixture, b *builder) string {
				ca := cred{cert: fx.inter.cert, key: fx.inter.key, chain: fx.inter.cert, subject: interDN}
				p := b.opensslProxy(ca, "proxy")
				return b.cat("alone.pem", p.cert, p.key)
			},
			want: ErrProxy, wantPos: 0, wantText: "no end-entity certificate follows"},
		{name: "independent proxy",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy_independent").chain },
			want: ErrProxy, wantPos: 0, wantText: "carries none of its issuer's rights",
			differs: map[string]string{peerOpenSSL: "OpenSSL leaves proxy policies to the application", peerVOMSVerify: "likewise"}},
		{name: "proxyCertInfo not critical",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy_noncritical").chain },
			want: ErrProxy, wantPos: 0, wantText: "not marked critical",
			differs: map[string]string{peerOpenSSL: "OpenSSL takes a non-critical proxyCertInfo (RFC 3820 3.8 says it MUST be critical)", peerVOMSVerify: "likewise"}},
		{name: "proxy with keyCertSign",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy_certsign").chain },
			want: ErrProxy, wantPos: 0, wantText: "keyCertSign",
			differs: map[string]string{peerOpenSSL: "OpenSSL does not check a proxy's own key usage (RFC 3820 3.7)", peerVOMSVerify: "likewise"}},
		{name: "unknown critical extension",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy_unknown_critical").chain },
			want: ErrCriticalExtension, wantPos: 0, wantText: "1.2.3.4.5",
			differs: map[string]string{peerVOMSVerify: "VOMS' proxy callback forgives unhandled critical extensions"}},
		{name: "Globus GT2 proxy by default",
			make: func(fx *fixture, b *builder) string { return b.globusProxy(fx.alice, fx.caDir, "-old").chain },
			want: ErrLegacyProxy, wantPos: 0, wantText: "CN=proxy",
			differs: map[string]string{peerVOMSVerify: "VOMS accepts GT2 proxies, as this package does with AllowLegacyProxies"}},
		{name: "Globus GT3 draft proxy",
			make:   func(fx *fixture, b *builder) string { return b.globusProxy(fx.alice, fx.caDir, "-draft").chain },
			config: func(c *Config) { c.AllowLegacyProxies = true },
			want:   ErrLegacyProxy, wantPos: 0, wantText: "GT3"},
	}
}

// refusedByTrust are chains refused for their CAs and CRLs.
func refusedByTrust() []chainCase {
	return []chainCase{
		{name: "no CRL, crl = use",
			make:   func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy").chain },
			caDir:  noCRLDir,
			config: func(c *Config) { c.CRL = CRLUse },
			want:   ErrCRL, wantPos: 1, wantText: rootDN + " has no CRL in the CA directory (crl = use)",
			differs: map[string]string{peerVOMSVerify: "VOMS checks CRLs only where there are some, as crl = try does"}},
		{name: "expired CRL, crl = require",
			make:   func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy").chain },
			caDir:  expiredCRLDir,
			config: func(c *Config) { c.CRL = CRLRequire },
			want:   ErrCRL, wantPos: 1, wantText: "the CRL of " + rootDN + " expired at"},
		{name: "CRL not signed by its CA",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.alice, "proxy").chain },
			caDir: func(fx *fixture, b *builder) string {
				// A CA with the root's name and another key signs the CRL.
				fake := b.newRootCA("fake-root", rootDN, false)
				dir := b.path("certificates")
				fx.installCADir(dir, b.crl(fake), b.crl(fx.inter))
				return dir
			},
			want: ErrCRL, wantPos: 1, wantText: "is not usable"},
		{name: "CA directory lacking the intermediate CA",
			make: func(fx *fixture, b *builder) string { return b.opensslProxy(fx.carol, "proxy").chain },
			caDir: func(fx *fixture, b *builder) string {
				dir := b.path("certificates")
				b.installCA(dir, []*testCA{fx.root})
				return dir
			},
			opensslFlags: []string{},
			want:         ErrUnknownCA, wantPos: 1, wantText: "its issuer " + interDN + " is not in the CA directory",
			differs: map[string]string{peerOpenSSL: "OpenSSL trusts an intermediate the client sends (-untrusted) up to a root it knows; here CAs come from the CA directory only", peerVOMSVerify: "likewise"}},
		{name: "expired intermediate CA in the CA directory",
			make:  func(fx *fixture, b *builder) string { return b.opensslProxy(fx.carol, "proxy").chain },
			caDir: func(fx *fixture, b *builder) string { return renewedInterDir(fx, b, false) },
			want:  ErrExpired, wantPos: 2, wantText: interDN + ", from the CA directory): expired at"},
	}
}

// renewedInterDir is a CA directory holding the intermediate CA as
// issued again with the same key but expired, and, with current, the
// current one too (<hash>.0 and <hash>.1).
func renewedInterDir(fx *fixture, b *builder, current bool) string {
	expired := b.path("inter-expired.pem")
	b.run("openssl", "ca", "-batch", "-config", fx.root.cnf, "-extensions", "v3_ca", "-preserveDN",
		"-startdate", ago(72*time.Hour), "-enddate", ago(time.Hour), "-in", fx.b.path("inter.csr"), "-out", expired)
	dir := b.path("certificates")
	b.installCA(dir, []*testCA{fx.root}, b.crl(fx.root), b.crl(fx.inter))
	hash := b.hash("x509", fx.inter.cert)
	b.copyTo(expired, filepath.Join(dir, hash+".0"))
	if current {
		b.copyTo(fx.inter.cert, filepath.Join(dir, hash+".1"))
	}
	return dir
}
