package x509grid

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesAgreeWithOpenSSL makes certificates with names OpenSSL
// canonicalises (case, white space, string types, several values in an
// RDN, non-ASCII) and compares SubjectHash with `openssl x509 -hash`
// and SlashName with `-nameopt compat` (X509_NAME_oneline).
func TestNamesAgreeWithOpenSSL(t *testing.T) {
	requireTools(t, "openssl")
	dir := t.TempDir()
	b := &builder{Dir: dir}
	key := b.NewKey("k", true)
	b.Write("ext.cnf", extensionsConf)
	b.Write("printable.cnf", "[req]\ndistinguished_name=dn\nstring_mask=default\n[dn]\n")
	cases := []struct {
		subj  string
		flags []string
	}{
		{subj: aliceDN},
		{subj: "/DC=org/DC=Example/OU=People/CN=alice   EXAMPLE "},
		{subj: "/C=CH/O=CERN/OU=Organic Units/OU=Users/CN=jdoe/CN=123456/CN=John Doe"},
		{subj: "/DC=ch/DC=cern/CN=Robot: Test/emailAddress=robot@example.org"},
		{subj: "/DC=org/DC=example/CN=Zoë Ünïcode", flags: []string{"-utf8"}},
		{subj: "/DC=org/DC=example/OU=A+CN=Multi Valued", flags: []string{"-multivalue-rdn"}},
		{subj: "/C=DE/O=GermanGrid/OU=KIT/CN=Printable String", flags: []string{"-config", b.Path("printable.cnf")}},
		{subj: "/DC=org/DC=example/UID=jdoe/serialNumber=42/CN=With UID"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			cert := b.Path(fmt.Sprintf("c%d.pem", i))
			args := append([]string{"req", "-x509", "-new", "-key", key, "-out", cert, "-subj", c.subj, "-days", "1"}, c.flags...)
			if len(c.flags) == 0 || c.flags[0] != "-config" {
				args = append(args, "-config", b.Path("ext.cnf"))
			}
			b.Run("openssl", args...)
			wantHash := b.Hash("x509", cert)
			wantOld := strings.TrimSpace(b.Run("openssl", "x509", "-subject_hash_old", "-noout", "-in", cert))
			wantSlash := b.SubjectOf(cert)
			b.OK(t)
			c := loadCerts(t, cert)[0]
			h, err := SubjectHash(c.RawSubject)
			if err != nil || fmt.Sprintf("%08x", h) != wantHash {
				t.Errorf("hash %08x (%v), openssl %s", h, err, wantHash)
			}
			if h := SubjectHashOld(c.RawSubject); fmt.Sprintf("%08x", h) != wantOld {
				t.Errorf("old hash %08x, openssl %s", h, wantOld)
			}
			if s, err := SlashName(c.RawSubject); err != nil || s != wantSlash {
				t.Errorf("slash name %q (%v), openssl %q", s, err, wantSlash)
			}
		})
	}
}

// Names differing only in case, spacing and string type are the same
// name, as OpenSSL compares them; others are not.
func TestSameName(t *testing.T) {
	requireTools(t, "openssl")
	b := &builder{Dir: t.TempDir()}
	key := b.NewKey("k", true)
	b.Write("ext.cnf", extensionsConf)
	b.Write("printable.cnf", "[req]\ndistinguished_name=dn\nstring_mask=default\n[dn]\n")
	mk := func(name, subj string, cnf string) []byte {
		out := b.Path(name)
		b.Run("openssl", "req", "-x509", "-new", "-key", key, "-out", out, "-subj", subj, "-days", "1", "-config", cnf)
		b.OK(t)
		return loadCerts(t, out)[0].RawSubject
	}
	a := mk("a.pem", "/DC=org/DC=example/CN=Alice Example", b.Path("ext.cnf"))
	same := mk("b.pem", "/DC=ORG/DC=example/CN=  alice    example", b.Path("printable.cnf"))
	other := mk("c.pem", "/DC=org/DC=example/CN=Alice Exampl", b.Path("ext.cnf"))
	reordered := mk("d.pem", "/DC=example/DC=org/CN=Alice Example", b.Path("ext.cnf"))
	if !sameName(a, same) {
		t.Error("names differing in case, spacing and string type are different")
	}
	if sameName(a, other) || sameName(a, reordered) {
		t.Error("different names are the same")
	}
}

func TestHashedFileName(t *testing.T) {
	for name, want := range map[string]string{
		"1a2b3c4d.0": "cert", "1a2b3c4d.12": "cert", "1a2b3c4d.r0": "crl",
		"1A2B3C4D.0": "", "1a2b3c4d.pem": "", "1a2b3c4.0": "", "1a2b3c4d.": "", "1a2b3c4d.r": "",
		"1a2b3c4d.signing_policy": "", "1a2b3c4d.namespaces": "", "CERN-Root-2.pem": "", "1a2b3c4d.0.bak": "",
	} {
		_, isCRL, ok := hashedFileName(name)
		got := ""
		if ok && isCRL {
			got = "crl"
		} else if ok {
			got = "cert"
		}
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestParseLSC(t *testing.T) {
	chains, err := parseLSC("  /DC=ch/DC=cern/OU=computers/CN=voms2.cern.ch \n\n\"/DC=ch/DC=cern/CN=CERN Grid Certification Authority\"\n" +
		lscNextChain + "\n/DC=ch/DC=cern/CN=new/emailAddress=a@b\n/DC=ch/DC=cern/CN=CA\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []lscChain{
		{{"/DC=ch/DC=cern/OU=computers/CN=voms2.cern.ch", "/DC=ch/DC=cern/CN=CERN Grid Certification Authority"}},
		{{"/DC=ch/DC=cern/CN=new/Email=a@b", "/DC=ch/DC=cern/CN=CA"}},
	}
	if fmt.Sprint(chains) != fmt.Sprint(want) {
		t.Errorf("%q, want %q", chains, want)
	}
	for _, bad := range []string{"", "/DC=a\n", "DC=a, CN=b\n/DC=c\n", "/a\n/b\n" + lscNextChain + "\n/c\n"} {
		if _, err := parseLSC(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestParseFQAN(t *testing.T) {
	for _, c := range []struct {
		in                string
		group, role, capa string
		bad               bool
	}{
		{in: "/cms", group: "/cms"},
		{in: "/cms/Role=NULL/Capability=NULL", group: "/cms"},
		{in: "/cms/uscms/Role=production/Capability=NULL", group: "/cms/uscms", role: "production"},
		{in: "/atlas/Role=pilot", group: "/atlas", role: "pilot"},
		{in: "/dteam/Capability=x", group: "/dteam", capa: "x"},
		{in: "cms", bad: true},
		{in: "/", bad: true},
		{in: "/cms//x", bad: true},
		{in: "/cms/../atlas", bad: true},
		{in: "/cms/Capability=NULL/Role=x", bad: true},
		{in: "/cms/Role=a/b", bad: true},
		{in: "/cms/a=b", bad: true},
		{in: "/cms/with space", bad: true},
		{in: "/cms/\x00", bad: true},
	} {
		f, err := ParseFQAN(c.in)
		switch {
		case c.bad && err == nil:
			t.Errorf("%q: accepted as %+v", c.in, f)
		case !c.bad && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case !c.bad && (f.Group != c.group || f.Role != c.role || f.Capability != c.capa || f.Value != c.in):
			t.Errorf("%q: %+v", c.in, f)
		}
	}
}

func TestCRLModes(t *testing.T) {
	for _, s := range []string{"ignore", "try", "use", "require"} {
		m, err := ParseCRLMode(s)
		if err != nil || m.String() != s {
			t.Errorf("%s: %v %v", s, m, err)
		}
	}
	if _, err := ParseCRLMode("always"); err == nil {
		t.Error("accepted a CRL mode xrootd does not have")
	}
	if m, _ := ParseCRLMode("try"); m != CRLTry || CRLMode(0) != CRLTry {
		t.Error("try is not the zero value")
	}
}

// TestLoadWarnings: files the CA directory and vomsdir cannot use are
// reported, and the rest loads.
func TestLoadWarnings(t *testing.T) {
	fx := sharedFixture(t)
	b := fx.scratch(t)
	caDir, vomsDir := b.Path("certificates"), b.Path("vomsdir")
	fx.installCADir(caDir)
	b.Write("certificates/deadbeef.0", "not a certificate")
	b.CopyTo(fx.Alice.Cert, filepath.Join(caDir, "00000000.0"))
	b.Write("certificates/deadbeef.r0", "not a CRL")
	b.CopyTo(fx.Root.Cert, filepath.Join(caDir, "Test-Root.pem"))
	oldHash := strings.TrimSpace(b.Run("openssl", "x509", "-subject_hash_old", "-noout", "-in", fx.Root.Cert))
	b.CopyTo(fx.Root.Cert, filepath.Join(caDir, oldHash+".0"))
	b.LSC(vomsDir, testVO, vomsHost, vomsDN, rootDN)
	b.Write("vomsdir/"+testVO+"/broken.lsc", "/DC=only/CN=one\n")
	b.Write("vomsdir/"+testVO+"/README", "hello")
	b.Write("vomsdir/stray.pem", "x")
	b.OK(t)
	v, err := New(Config{CertDir: caDir, VOMSDir: vomsDir})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(v.Warnings(), "\n")
	for _, want := range []string{"deadbeef.0: no certificate read", "00000000.0: a certificate whose subject hash is",
		"deadbeef.r0: not a CRL", "testvo/broken.lsc: an odd number of DNs", "testvo/README: neither", "stray.pem: not used"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "Test-Root.pem") || strings.Contains(w, oldHash) {
		t.Errorf("a file not named by hash, or a link under the old hash, was read:\n%s", w)
	}
	if v.CAs() != 2 {
		t.Errorf("%d CAs, want 2", v.CAs())
	}
	if _, err := New(Config{CertDir: filepath.Join(b.Dir, "missing")}); err == nil {
		t.Error("a missing CA directory is no error")
	}
	if _, err := New(Config{}); err == nil {
		t.Error("no CA directory is no error")
	}
	if os.Getenv("X509GRID_KEEP") == "" {
		return
	}
	out, _ := exec.Command("ls", "-l", caDir).Output()
	t.Logf("%s", out)
}

// TestProxyPathLength: each proxy's path length bounds the proxies
// below it, the tightest one above counting.
func TestProxyPathLength(t *testing.T) {
	for _, c := range []struct {
		lens []int // leaf first, as presented
		want int
	}{
		{[]int{-1}, -1},
		{[]int{0}, -1},
		{[]int{-1, 0}, 0},
		{[]int{-1, -1, 1}, 0},
		{[]int{-1, 1}, -1},
		{[]int{-1, 2, 0}, 1},
		{[]int{-1, 0, 5}, 0},
		{[]int{3, 2, 1, -1}, 0},
		{[]int{0, 1, 2, -1}, -1},
		{[]int{-1, -1, -1, 1, -1}, 1},
	} {
		var proxies []*link
		for _, l := range c.lens {
			proxies = append(proxies, &link{proxy: proxyInfo{kind: proxyRFC3820, pathLen: l}})
		}
		if got := proxyPathLength(proxies); got != c.want {
			t.Errorf("%v: %d, want %d", c.lens, got, c.want)
		}
	}
}
