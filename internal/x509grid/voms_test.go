package x509grid

import (
	"errors"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// acCase is a VOMS proxy whose chain is valid; what is decided is
// whether its attribute certificates count.
type acCase struct {
	name string
	// make returns the proxy file.
	make    func(t *testing.T, fx *fixture, b *builder) string
	vomsDir func(fx *fixture, b *builder) string
	caDir   func(fx *fixture, b *builder) string
	config  func(*Config)
	// wantVOs are the VOs accepted, in order; want and wantText describe
	// the first refused AC, if any.
	wantVOs  []string
	want     error
	wantText string
	check    func(t *testing.T, fx *fixture, r *Result)
	// differs says why libvomsapi decides otherwise; noPeer why it is
	// not asked.
	differs string
	noPeer  string
}

func TestVOMS(t *testing.T) {
	fx := sharedFixture(t)
	for _, c := range slices.Concat(acceptedACs(), refusedACs(), invalidACs(), badFieldACs(), badServerACs()) {
		t.Run(c.name, func(t *testing.T) {
			b := fx.scratch(t)
			file := c.make(t, fx, b)
			vomsDir, caDir := fx.VOMSDir, fx.CADir
			if c.vomsDir != nil {
				vomsDir = c.vomsDir(fx, b)
			}
			if c.caDir != nil {
				caDir = c.caDir(fx, b)
			}
			b.OK(t)
			v := fx.verifier(t, func(cfg *Config) {
				cfg.VOMSDir, cfg.CertDir = vomsDir, caDir
				if c.config != nil {
					c.config(cfg)
				}
			})
			res, err := v.VerifyPEM(readPEM(t, file), time.Now())
			if err != nil {
				t.Fatalf("chain refused: %v", err)
			}
			checkACDecision(t, fx, c, res)
			if c.noPeer != "" {
				t.Logf("libvomsapi not asked: %s", c.noPeer)
				return
			}
			compareLibVOMS(t, c, res, libVOMS(t, caDir, vomsDir, file))
		})
	}
}

func checkACDecision(t *testing.T, fx *fixture, c acCase, res *Result) {
	t.Helper()
	var got []string
	for _, vo := range res.VOs {
		got = append(got, vo.Name)
	}
	if !reflect.DeepEqual(got, c.wantVOs) {
		t.Errorf("VOs %q, want %q; refused: %v", got, c.wantVOs, res.RejectedACs)
	}
	switch {
	case c.want == nil && len(res.RejectedACs) > 0:
		t.Errorf("refused ACs: %v", res.RejectedACs)
	case c.want != nil && len(res.RejectedACs) == 0:
		t.Errorf("no AC refused, want %v", c.want)
	case c.want != nil:
		err := res.RejectedACs[0]
		if !errors.Is(err, c.want) || !errors.Is(err, ErrVOMS) || !strings.Contains(err.Error(), c.wantText) {
			t.Errorf("refused with %q, want %v saying %q", err, c.want, c.wantText)
		}
		t.Logf("refused: %v", err)
	}
	if c.check != nil {
		c.check(t, fx, res)
	}
}

// compareLibVOMS requires libvomsapi to accept the same VOs with the
// same FQANs, unless a difference is documented (and still holds).
func compareLibVOMS(t *testing.T, c acCase, res *Result, peer libVOMSResult) {
	t.Helper()
	var ours, theirs []string
	for _, vo := range res.VOs {
		for _, f := range vo.FQANs {
			ours = append(ours, vo.Name+" "+f.Value)
		}
	}
	if peer.OK {
		for _, vo := range peer.VOs {
			for _, f := range vo.FQANs {
				theirs = append(theirs, vo.VO+" "+f)
			}
		}
	}
	same := reflect.DeepEqual(ours, theirs)
	switch {
	case c.differs != "" && same:
		t.Errorf("libvomsapi now agrees (%q); the documented difference %q no longer holds", theirs, c.differs)
	case c.differs == "" && !same:
		t.Errorf("libvomsapi accepts %q (%s), this package %q", theirs, peer.Error, ours)
	case c.differs != "":
		t.Logf("libvomsapi differs as documented (%s): %q, %s", c.differs, theirs, peer.Error)
	default:
		t.Logf("libvomsapi agrees: %q %s", theirs, peer.Error)
	}
}

// vomsProxyOf is a VOMS proxy of user from the fixture's VOMS server.
func vomsProxyOf(fx *fixture, b *builder, user cred, fqans ...string) cred {
	if len(fqans) == 0 {
		fqans = []string{testFQAN, prodFQAN}
	}
	return b.VOMSProxy(user, fx.VOMS, fx.CADir, testVO, vomsHost, fqans)
}

func acceptedACs() []acCase {
	return []acCase{
		{name: "VOMS proxy",
			make:    func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.Alice).Chain },
			wantVOs: []string{testVO},
			check: func(t *testing.T, fx *fixture, r *Result) {
				vo := r.VOs[0]
				want(t, vo.Server, vomsDN, "VOMS server")
				want(t, vo.URI, vomsHost+":15000", "URI")
				want(t, len(vo.FQANs), 2, "FQANs")
				want(t, vo.FQANs[0], FQAN{Value: testFQAN, Group: "/testvo"}, "first FQAN")
				want(t, vo.FQANs[1], FQAN{Value: prodFQAN, Group: "/testvo/prod", Role: "production"}, "second FQAN")
				want(t, strings.Join(r.Groups(), ","), "/testvo,/testvo/prod", "groups")
				want(t, r.Expires.After(vo.NotAfter), false, "expiry no later than the AC's")
			}},
		{name: "proxy of a VOMS proxy",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.OpenSSLProxy(vomsProxyOf(fx, b, fx.Alice), "proxy").Chain
			},
			wantVOs: []string{testVO},
			check:   func(t *testing.T, fx *fixture, r *Result) { want(t, r.Proxies, 2, "proxies") }},
		{name: "user of the intermediate CA",
			make:    func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.Carol).Chain },
			wantVOs: []string{testVO}},
		{name: "VOMS server certificate in the vomsdir instead of an .lsc",
			make: func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.Alice).Chain },
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.Path("vomsdir")
				b.LSC(dir, otherVO, voms2Host, voms2DN, rootDN)
				b.Mkdir(dir + "/" + testVO)
				b.CopyTo(fx.VOMS.Cert, dir+"/"+testVO+"/voms.pem")
				return dir
			},
			wantVOs: []string{testVO}},
		{name: "two VOs",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				alice := vomsProxyOf(fx, b, fx.Alice)
				other := b.VOMSProxy(fx.Alice, fx.VOMS2, fx.CADir, otherVO, voms2Host, []string{otherFQAN})
				b.OK(t)
				ext := wrapACs(t, firstAC(t, alice.Chain), firstAC(t, other.Chain))
				return withVOMSExtension(t, b, alice.Chain, fx.Alice, ext)
			},
			wantVOs: []string{testVO, otherVO},
			check: func(t *testing.T, fx *fixture, r *Result) {
				want(t, strings.Join(r.Groups(), ","), "/testvo,/testvo/prod,/othervo", "groups")
			}},
		{name: "holder named by the user's issuer and serial, as VOMS writes it",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				p := vomsProxyOf(fx, b, fx.Alice)
				b.OK(t)
				user := loadCerts(t, fx.Alice.Cert)[0]
				ext := resignedAC(t, vomsExtension(t, p.Chain), fx.VOMS.Key, func(a *acParts) {
					a.Holder = holderIssuerSerial(t, user.RawIssuer, user.SerialNumber)
				})
				return withVOMSExtension(t, b, p.Chain, fx.Alice, ext)
			},
			wantVOs: []string{testVO}},
		{name: "AC for this host",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				p := vomsProxyOf(fx, b, fx.Alice)
				b.OK(t)
				ext := resignedAC(t, vomsExtension(t, p.Chain), fx.VOMS.Key, func(a *acParts) {
					a.Extensions = append(a.Extensions, targetsExtension(t, "other.example.org", thisHost(t)))
				})
				return withVOMSExtension(t, b, p.Chain, fx.Alice, ext)
			},
			config:  func(c *Config) { c.Hostnames = []string{"box.example.org", thisHost(nil)} },
			wantVOs: []string{testVO},
			noPeer:  libVOMSHostUnknown()},
	}
}

// firstAC is the DER of a VOMS proxy file's first AC.
func firstAC(t *testing.T, proxyFile string) []byte {
	t.Helper()
	acs, err := splitACs(vomsExtension(t, proxyFile), 8)
	if err != nil || len(acs) == 0 {
		t.Fatalf("%s: %v", proxyFile, err)
	}
	return acs[0]
}

// thisHost is this machine's name, which libvomsapi matches AC targets
// with.
func thisHost(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil && t != nil {
		t.Fatal(err)
	}
	return h
}

// libVOMSHostUnknown says why libvomsapi cannot match a target here:
// it takes the host name for its own only when the NIS domain name is
// unset ("(none)"), and matches nothing otherwise.
func libVOMSHostUnknown() string {
	out, err := exec.Command("domainname").Output()
	if err == nil && strings.TrimSpace(string(out)) == "(none)" {
		return ""
	}
	return "libvomsapi knows its host name only when the NIS domain name is unset"
}

// TestVOMSProxyInfoShowsTheSame compares what this package reads from an
// accepted VOMS proxy with what voms-proxy-info prints of it. (It prints
// unverified attributes too, so it judges reading, not trust.)
func TestVOMSProxyInfoShowsTheSame(t *testing.T) {
	fx := sharedFixture(t)
	b := fx.scratch(t)
	p := vomsProxyOf(fx, b, fx.Carol)
	b.OK(t)
	res, err := fx.verifier(t).VerifyPEM(readPEM(t, p.Chain), time.Now())
	if err != nil || len(res.VOs) != 1 {
		t.Fatalf("%v %v", err, res)
	}
	vo := res.VOs[0]
	var fqans []string
	for _, f := range vo.FQANs {
		fqans = append(fqans, f.Value)
	}
	for opt, ours := range map[string]string{
		"-identity": res.Subject, "-acsubject": res.Subject, "-acissuer": vo.Server,
		"-vo": vo.Name, "-uri": vo.URI, "-fqan": strings.Join(fqans, "\n"),
	} {
		cmd := exec.Command("voms-proxy-info", "-file", p.Chain, opt)
		cmd.Env = append(os.Environ(), "X509_CERT_DIR="+fx.CADir, "X509_VOMS_DIR="+fx.VOMSDir)
		out, err := cmd.Output()
		if got := strings.TrimSuffix(string(out), "\n"); err != nil || got != ours {
			t.Errorf("voms-proxy-info %s: %q (%v), this package %q", opt, got, err, ours)
		}
	}
}
