package x509grid

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// chainCase is one credential, this package's expected decision, and
// the peers it is compared with.
type chainCase struct {
	name string
	// make returns the chain file, leaf first (a proxy file).
	make func(fx *fixture, b *builder) string
	// caDir makes the CA directory, when not the fixture's.
	caDir  func(fx *fixture, b *builder) string
	config func(*Config)
	// want is nil for an accepted chain, else the reason's sentinel;
	// wantPos the refused certificate's position and wantText a part of
	// the error's text.
	want     error
	wantPos  int
	wantText string
	check    func(t *testing.T, fx *fixture, r *Result)
	// opensslFlags replace -crl_check_all for openssl verify.
	opensslFlags []string
	// differs names the peers that decide otherwise, and why.
	differs map[string]string
}

func TestChains(t *testing.T) {
	fx := sharedFixture(t)
	for _, c := range slices.Concat(acceptedChains(), acceptedByCRLPolicy(), refusedChains(), refusedByTrust()) {
		t.Run(c.name, func(t *testing.T) {
			b := fx.scratch(t)
			file := c.make(fx, b)
			caDir := fx.CADir
			if c.caDir != nil {
				caDir = c.caDir(fx, b)
			}
			b.OK(t)
			v := fx.verifier(t, func(cfg *Config) {
				cfg.CertDir = caDir
				if c.config != nil {
					c.config(cfg)
				}
			})
			res, err := v.VerifyPEM(readPEM(t, file), time.Now())
			checkDecision(t, fx, c, res, err)
			comparePeers(t, c, caDir, file, err == nil)
		})
	}
}

func checkDecision(t *testing.T, fx *fixture, c chainCase, res *Result, err error) {
	t.Helper()
	if c.want == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		if c.check != nil {
			c.check(t, fx, res)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want refused (%v)", c.want)
	}
	var ce *CertError
	if !errors.Is(err, c.want) || !errors.As(err, &ce) || ce.Position != c.wantPos || !strings.Contains(err.Error(), c.wantText) {
		t.Fatalf("refused with %q, want %v at certificate %d saying %q", err, c.want, c.wantPos, c.wantText)
	}
	t.Logf("refused: %v", err)
}

// comparePeers asks the peers and requires them to decide as this
// package did, except where a difference is documented, which must
// still hold.
func comparePeers(t *testing.T, c chainCase, caDir, file string, accepted bool) {
	t.Helper()
	flags := c.opensslFlags
	if flags == nil {
		flags = []string{"-crl_check_all"}
	}
	verdicts := map[string]peerVerdict{
		peerOpenSSL:    opensslVerify(t, caDir, file, flags),
		peerVOMSVerify: vomsVerify(t, caDir, file),
	}
	for peer, v := range verdicts {
		why, differs := c.differs[peer]
		switch {
		case differs && v.accepted == accepted:
			t.Errorf("%s now agrees (accepted: %v); the documented difference %q no longer holds", peer, accepted, why)
		case !differs && v.accepted != accepted:
			t.Errorf("%s accepted: %v, this package: %v\n%s", peer, v.accepted, accepted, v.output)
		case differs:
			t.Logf("%s differs as documented (%s)", peer, why)
		default:
			t.Logf("%s agrees (accepted: %v)", peer, accepted)
		}
	}
}

func acceptedChains() []chainCase {
	return []chainCase{
		{name: "RFC 3820 proxy (openssl)",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy").Chain },
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Subject, aliceDN, "subject")
				want(t, r.Issuer, rootDN, "issuer")
				want(t, r.Proxies, 1, "proxies")
				want(t, r.Limited, false, "limited")
				want(t, len(r.Chain), 3, "chain length")
				want(t, r.Expires, earliestOf(r), "expiry")
			}},
		{name: "proxy of a proxy",
			make: func(fx *fixture, b *builder) string {
				return b.OpenSSLProxy(b.OpenSSLProxy(fx.Alice, "proxy"), "proxy").Chain
			},
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Subject, aliceDN, "subject")
				want(t, r.Proxies, 2, "proxies")
			}},
		{name: "limited proxy",
			make:  func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy_limited").Chain },
			check: func(t *testing.T, fx *fixture, r *Result) { want(t, r.Limited, true, "limited") }},
		{name: "full proxy of a limited proxy is limited",
			make: func(fx *fixture, b *builder) string {
				return b.OpenSSLProxy(b.OpenSSLProxy(fx.Alice, "proxy_limited"), "proxy").Chain
			},
			check: func(t *testing.T, fx *fixture, r *Result) { want(t, r.Limited, true, "limited") },
			differs: map[string]string{peerVOMSVerify: "Globus' rule: a limited proxy issues no proxy; here the chain is limited, " +
				"as OpenSSL and xrootd accept it"}},
		{name: "end-entity certificate alone",
			make: func(fx *fixture, b *builder) string { return fx.Alice.Chain },
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Subject, aliceDN, "subject")
				want(t, r.Proxies, 0, "proxies")
			}},
		{name: "user of an intermediate CA",
			make: func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Carol, "proxy").Chain },
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Subject, carolDN, "subject")
				want(t, r.Issuer, interDN, "issuer")
				// The intermediate sent along is not trusted: the chain's
				// CAs are the CA directory's.
				want(t, len(r.Chain), 4, "chain length")
			}},
		{name: "grid-proxy-init -rfc",
			make: func(fx *fixture, b *builder) string { return b.GlobusProxy(fx.Alice, fx.CADir, "-rfc").Chain },
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Subject, aliceDN, "subject")
				want(t, r.Limited, false, "limited")
			}},
		{name: "grid-proxy-init -rfc -limited",
			make: func(fx *fixture, b *builder) string {
				return b.GlobusProxy(fx.Alice, fx.CADir, "-rfc", "-limited").Chain
			},
			check: func(t *testing.T, fx *fixture, r *Result) { want(t, r.Limited, true, "limited") }},
		{name: "grid-proxy-init -old when legacy proxies are allowed",
			make:   func(fx *fixture, b *builder) string { return b.GlobusProxy(fx.Alice, fx.CADir, "-old").Chain },
			config: func(c *Config) { c.AllowLegacyProxies = true },
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Subject, aliceDN, "subject")
				want(t, r.Limited, false, "limited")
			},
			differs: map[string]string{peerOpenSSL: "OpenSSL knows no Globus GT2 proxies"}},
		{name: "grid-proxy-init -old -limited when legacy proxies are allowed",
			make: func(fx *fixture, b *builder) string {
				return b.GlobusProxy(fx.Alice, fx.CADir, "-old", "-limited").Chain
			},
			config:  func(c *Config) { c.AllowLegacyProxies = true },
			check:   func(t *testing.T, fx *fixture, r *Result) { want(t, r.Limited, true, "limited") },
			differs: map[string]string{peerOpenSSL: "OpenSSL knows no Globus GT2 proxies"}},
	}
}

// acceptedByCRLPolicy are chains the CRL policy lets through.
func acceptedByCRLPolicy() []chainCase {
	return []chainCase{
		{name: "revoked user when CRLs are ignored",
			make:         func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Mallory, "proxy").Chain },
			config:       func(c *Config) { c.CRL = CRLIgnore },
			opensslFlags: []string{},
			differs:      map[string]string{peerVOMSVerify: "VOMS always uses the CRLs of the CA directory"}},
		{name: "CA renewed with the same key: the valid one of two",
			make:  func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Carol, "proxy").Chain },
			caDir: func(fx *fixture, b *builder) string { return renewedInterDir(fx, b, true) },
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, r.Chain[2].NotAfter.After(time.Now()), true, "the intermediate used is the valid one")
			}},
		{name: "no CRL, crl = try",
			make:         func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy").Chain },
			caDir:        noCRLDir,
			opensslFlags: []string{}},
		{name: "expired CRL, crl = try, reported",
			make:         func(fx *fixture, b *builder) string { return b.OpenSSLProxy(fx.Alice, "proxy").Chain },
			caDir:        expiredCRLDir,
			opensslFlags: []string{},
			check: func(t *testing.T, fx *fixture, r *Result) {
				if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "the CRL of "+rootDN+" expired at") {
					t.Errorf("warnings %q, want the root CA's CRL expired", r.Warnings)
				}
			},
			differs: map[string]string{peerVOMSVerify: "VOMS refuses a CA whose CRL expired, as crl = require does"}},
	}
}

func want[T comparable](t *testing.T, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// earliestOf recomputes the earliest expiry of a result's chain.
func earliestOf(r *Result) time.Time {
	var e time.Time
	for _, c := range r.Chain {
		e = earliest(e, c.NotAfter)
	}
	return e
}

// noCRLDir is a CA directory without CRLs.
func noCRLDir(fx *fixture, b *builder) string {
	dir := b.Path("certificates")
	fx.installCADir(dir)
	return dir
}

// expiredCRLDir is a CA directory whose root CRL's next update is past.
func expiredCRLDir(fx *fixture, b *builder) string {
	dir := b.Path("certificates")
	old := b.CRL(fx.Root, "-crl_lastupdate", ago(48*time.Hour), "-crl_nextupdate", ago(24*time.Hour))
	fx.installCADir(dir, old, b.CRL(fx.Inter))
	return dir
}
