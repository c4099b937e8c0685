package auth

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/x509grid"
	"sitebox/internal/x509grid/x509test"
)

var pki x509test.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pki.Remove()
	os.Exit(code)
}

// chainOf reads the certificates of a proxy file, leaf first.
func chainOf(t *testing.T, file string) []*x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*x509.Certificate
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
	}
}

// Real credentials, through the settings the box builds from: a VOMS
// proxy gets its VO and the role's rule, a limited one only its reads,
// a plain proxy only what the rules give its DN, another CA's nothing.
func TestX509Identify(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, []string{x509test.ProdFQAN, x509test.TestFQAN})
	limited := p.VOMSProxyOf(b, p.Alice, []string{x509test.ProdFQAN}, "-limited")
	plain := b.OpenSSLProxy(p.Bob, "proxy")
	eve := b.OpenSSLProxy(p.Eve, "proxy")
	b.OK(t)
	s := &X509Settings{CertDir: p.CADir, VOMSDir: p.VOMSDir, Maps: []X509MapEntry{
		{FQAN: "/testvo/prod/Role=production", Scopes: []string{"storage.modify:/store/mc"}},
		{DN: x509test.BobDN, User: "bob"},
	}, MappedScopes: []string{"storage.create:/store/user/{user}"}}
	s.defaults(func(string) string { return "" })
	a, err := s.X509()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, c := range []struct {
		name   string
		file   string
		groups []string
		scopes []string
	}{
		{"VOMS proxy", vp.Chain, []string{"/testvo/prod", "/testvo"}, []string{"modify:/store/mc"}},
		{"limited VOMS proxy", limited.Chain, []string{"/testvo/prod"}, nil},
		{"plain proxy of a mapped DN", plain.Chain, nil, []string{"create:/store/user/bob"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, res, err := a.Identify(chainOf(t, c.file), now)
			if err != nil {
				t.Fatal(err)
			}
			if id.Issuer != "x509:"+x509test.RootDN || id.Subject != res.Subject || !slices.Equal(id.Groups, c.groups) || !slices.Equal(scopes(id), c.scopes) {
				t.Errorf("identity %+v", id)
			}
		})
	}
	if _, _, err := a.Identify(chainOf(t, eve.Chain), now); !errors.Is(err, x509grid.ErrUnknownCA) {
		t.Errorf("a proxy of another CA: %v", err)
	}
	if u, ok := a.SiteUser(&store.Identity{Method: MethodX509, Issuer: "x509:" + x509test.RootDN, Subject: x509test.BobDN}); u != "bob" || !ok {
		t.Errorf("SiteUser(bob) = %q", u)
	}
	if _, ok := a.SiteUser(&store.Identity{Issuer: "https://issuer", Subject: x509test.BobDN}); ok {
		t.Error("a token's subject is a site user")
	}
}

// Reload reads a new CRL: a user revoked after the start is refused from
// the next reading on; a reading that fails keeps the previous one.
func TestX509Reload(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	user := b.Issue(p.Root, b.Unique("dave"), "/DC=org/DC=example/OU=People/CN=Dave Example", "v3_user")
	proxy := b.OpenSSLProxy(user, "proxy")
	caDir := b.Path("certificates")
	p.InstallCADir(caDir, b.CRL(p.Root), b.CRL(p.Inter))
	grid := b.Write("grid-mapfile", "\"/DC=org/DC=example/OU=People/CN=Dave Example\" dave\n")
	b.OK(t)
	s := &X509Settings{CertDir: caDir, VOMSDir: p.VOMSDir, GridMapfile: grid}
	s.defaults(func(string) string { return "" })
	a, err := s.X509()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Identify(chainOf(t, proxy.Chain), time.Now()); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	b.Revoke(p.Root, user, "keyCompromise")
	p.InstallCADir(caDir, b.CRL(p.Root))
	b.OK(t)
	os.WriteFile(grid, []byte("\"/cms\" .pool\n"), 0o644)
	if err := a.Reload(); err == nil || !strings.Contains(err.Error(), "pool account") {
		t.Fatalf("reload with a bad mapfile: %v", err)
	}
	if _, _, err := a.Identify(chainOf(t, proxy.Chain), time.Now()); err != nil {
		t.Fatalf("a failed reload changed the trust stores: %v", err)
	}
	os.WriteFile(grid, nil, 0o644)
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Identify(chainOf(t, proxy.Chain), time.Now()); !errors.Is(err, x509grid.ErrRevoked) {
		t.Errorf("after revocation and reload: %v", err)
	}
}

// What makes the trust stores refuse credentials is named, severe when
// every user of a CA (or of all) is refused: config check warns of it,
// the doctor reports it.
func TestX509Findings(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	empty := b.Path("empty")
	b.Mkdir(empty)
	noCRL := b.Path("nocrl")
	p.InstallCADir(noCRL)
	stale := b.Path("stale")
	p.InstallCADir(stale, b.CRL(p.Root, "-crl_lastupdate", x509test.Ago(48*time.Hour), "-crl_nextupdate", x509test.Ago(24*time.Hour)), b.CRL(p.Inter))
	b.OK(t)
	vo := []NamespaceEntry{{Prefix: "/store/vo", Read: ReadVO, VOs: []string{x509test.TestVO}}}
	for _, c := range []struct {
		name  string
		x     X509Settings
		ns    []NamespaceEntry
		want  []string // key: message part
		worst bool
	}{
		{"all well", X509Settings{CertDir: p.CADir, VOMSDir: p.VOMSDir}, vo, nil, false},
		{"no CA", X509Settings{CertDir: empty, VOMSDir: p.VOMSDir}, nil, []string{"auth.x509.cert_dir: holds no CA certificate"}, true},
		{"stale CRL, crl = try", X509Settings{CertDir: stale, VOMSDir: p.VOMSDir}, nil, []string{"auth.x509.crl: 1 CRL(s) out of date"}, false},
		{"stale CRL, crl = require", X509Settings{CertDir: stale, VOMSDir: p.VOMSDir, CRL: "require"}, nil, []string{`auth.x509.crl: under crl = "require" every user of 1 CA(s) is refused: the CRL of ` + x509test.RootDN + " expired"}, true},
		{"no CRL, crl = try", X509Settings{CertDir: noCRL, VOMSDir: p.VOMSDir}, nil, nil, false},
		{"no CRL, crl = use", X509Settings{CertDir: noCRL, VOMSDir: p.VOMSDir, CRL: "use"}, nil, []string{`auth.x509.crl: under crl = "use" every user of 2 CA(s) is refused: ` + x509test.InterDN + ": no CRL (crl = use)"}, true},
		{"a VO the vomsdir lacks", X509Settings{CertDir: p.CADir, VOMSDir: empty},
			[]NamespaceEntry{{Prefix: "/store/cms", Read: ReadVO, VOs: []string{"cms"}}},
			[]string{"auth.x509.voms_dir: VOMS proxies of cms are refused on /store/cms: " + empty + " lists no VOMS server for cms"}, false},
		{"a VO a rule grants", X509Settings{CertDir: p.CADir, VOMSDir: empty, Maps: []X509MapEntry{{FQAN: "/x", Groups: []string{"/cms"}}}},
			[]NamespaceEntry{{Prefix: "/store/cms", Read: ReadVO, VOs: []string{"cms"}}}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Settings{X509: &c.x, Namespaces: c.ns}
			fs := s.X509Findings(time.Now())
			var got []string
			worst := false
			for _, f := range fs {
				got = append(got, f.Key+": "+f.Msg)
				worst = worst || f.Severe
			}
			if len(got) != len(c.want) || worst != c.worst {
				t.Fatalf("findings %q (severe %v), want %q (severe %v)", got, worst, c.want, c.worst)
			}
			for i, w := range c.want {
				key, msg, _ := strings.Cut(w, ": ")
				if fs[i].Key != key || !strings.Contains(fs[i].Msg, msg) || fs[i].Fix == "" {
					t.Errorf("finding %q (fix %q), want %q", got[i], fs[i].Fix, w)
				}
			}
		})
	}
}
