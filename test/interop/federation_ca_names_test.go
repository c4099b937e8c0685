package interop

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sitebox/internal/director"
	"sitebox/test/peers"
)

// TestFederationCARefusesNames: requests that ask the federation CA for
// names no member should have (crafted by hand, as an attacker would, and
// signed with their own key) are refused by approve with the reason, and
// nothing is recorded or signed; the CA, given the federation's names,
// carries them as name constraints that OpenSSL enforces on anything its
// key signs.
func TestFederationCARefusesNames(t *testing.T) {
	peers.Require(t, "openssl")
	spec := prepareNode(t, 0)
	conf := "[director]\nenabled = true\nca = true\nca_domains = [\"example.org\"]\nca_networks = [\"127.0.0.0/8\"]\n" +
		"[advertise]\nhttps_url = \"https://region.example.org:" + strconv.Itoa(spec.hp) + "\"\n"
	region := spec.start(t, "region", "R", conf)
	regionConf := filepath.Join(region.state, "sitebox.toml")
	approve := func(r director.Request, flags ...string) (string, error) {
		return run(t, true, siteboxBin, append([]string{"federation", "approve", craftRequest(t, r), "--config", regionConf}, flags...)...)
	}
	asking := func(name, root, https string) director.Request {
		return director.Request{Member: director.Member{Name: name, Roles: []string{director.RoleOrigin}, Prefixes: []string{"/store"}, Root: root, HTTPS: https},
			Director: region.httpsURL}
	}
	if out, err := approve(asking("first", "shared.example.org:1094", ""), "--yes"); err != nil || !strings.Contains(out, "signed by the federation CA") {
		t.Fatalf("a member with a name of the federation: %v\n%s", err, out)
	}
	elsewhere := asking("lost", "lost.example.org:1094", "")
	elsewhere.Director = "https://other.example.org:8443"
	for _, c := range []struct {
		name   string
		r      director.Request
		reason string
	}{
		{"wildcard", asking("w", "*.example.org:1094", ""), "is a wildcard"},
		{"loopback name", asking("l", "localhost:1094", ""), "loopback"},
		{"loopback address", asking("l", "", "https://127.0.0.1:9443"), "--allow-loopback"},
		{"outside the domains", asking("g", "", "https://accounts.google.com:443"), "outside the federation's domains"},
		{"outside the networks", asking("n", "198.51.100.7:1094", ""), "outside the federation's address ranges"},
		{"unspecified v4", asking("z", "0.0.0.0:1094", ""), "unspecified address"},
		{"unspecified v6", asking("z", "[::]:1094", ""), "unspecified address"},
		{"no host name", asking("c", "a,b.example.org:1094", ""), "is not a host name"},
		{"the director's name", asking("d", "region.example.org:1094", ""), "this director's own name"},
		{"another member's name", asking("s", "", "https://shared.example.org:8443"), "is member first's"},
		{"a single label", asking("u", "t3box:1094", ""), "not a fully qualified name"},
		{"addressed to another director", elsewhere, "not to this director"},
	} {
		out, err := approve(c.r, "--yes")
		if err == nil || !strings.Contains(out, c.reason) {
			t.Errorf("%s: approve %v, want a refusal naming %q:\n%s", c.name, err, c.reason, out)
		}
	}
	// A test federation's loopback member, approved on purpose.
	if out, err := approve(asking("loop", "127.0.0.1:3000", ""), "--yes", "--allow-loopback"); err != nil {
		t.Fatalf("--allow-loopback: %v\n%s", err, out)
	}
	ms, _ := director.ReadMembers(director.MembersFile(region.state))
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	certs, _ := filepath.Glob(filepath.Join(region.state, "federation", "certs", "*.pem"))
	if !slices.Equal(names, []string{"first", "loop"}) || len(certs) != 2 {
		t.Errorf("members %v and certificates %v; want first and loop only", names, certs)
	}

	// The CA's constraints, as OpenSSL (curl's, xrdcp's) applies them.
	caFile := director.CAFile(region.state)
	certs = append(certs, forgeOutside(t, region.state, "accounts.google.com"), forgeOutside(t, region.state, "10.1.2.3"))
	for _, f := range certs {
		out, err := run(t, true, "openssl", "verify", "-CAfile", caFile, f)
		outside := strings.Contains(f, "forged")
		if outside != (err != nil) || outside && !strings.Contains(out, "subtree violation") {
			t.Errorf("openssl verify %s: %v\n%s", filepath.Base(f), err, out)
		}
	}
	// The director's own certificate keeps only its names within them.
	out, _ := run(t, false, "openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", filepath.Join(region.state, "tls", "federation-cert.pem"))
	if !strings.Contains(out, "DNS:region.example.org") || !strings.Contains(out, "IP Address:127.0.0.1") || strings.Contains(out, "localhost") {
		t.Errorf("the director's own certificate names: %s", out)
	}
	if out, err := run(t, true, "curl", "-sSf", "--cacert", caFile, "-o", "/dev/null", region.httpsURL+director.CAPath); err != nil {
		t.Errorf("curl trusting the constrained CA reaches the director: %v\n%s", err, out)
	}
}

// craftRequest signs r with a key of its own, as `federation join` would
// for a box configured so (or as anyone can without sitebox).
func craftRequest(t *testing.T, r director.Request) string {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	tlsKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&tlsKey.PublicKey)
	r.TLSKey = base64.StdEncoding.EncodeToString(der)
	text, err := r.Encode(key)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// forgeOutside has the director's CA key sign a certificate for host
// directly, past approve's checks, as a stolen key would.
func forgeOutside(t *testing.T, state, host string) string {
	t.Helper()
	nc, _ := director.ParseNameConstraints([]string{"example.org"}, []string{"127.0.0.0/8"})
	ca, err := director.LoadOrCreateCA(state, "region", nc)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	chain, err := ca.Issue(&key.PublicKey, "forged", []string{host})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "forged-"+host+".pem")
	os.WriteFile(f, chain, 0o644)
	return f
}

// TestFederationCAReissue: a CA made before the federation's names were
// configured is not used under them until `sitebox federation reissue-ca`,
// which refuses constraints a member's certificate breaks, and otherwise
// re-issues the CA with the same key: the member's certificate still
// verifies (OpenSSL, curl), a forged one outside does not, and the
// restarted director serves a certificate within the constraints.
func TestFederationCAReissue(t *testing.T) {
	peers.Require(t, "openssl")
	peers.Require(t, "curl")
	spec := prepareNode(t, 0)
	region := spec.start(t, "region", "R", "[director]\nenabled = true\nca = true\n")
	regionConf := filepath.Join(region.state, "sitebox.toml")
	boxA := startFedNode(t, "boxA", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(t.TempDir())+"]\n"+
		"[advertise]\nto = ["+strconv.Quote(region.httpsURL)+"]\ninterval = \"300ms\"\n"+approveMark+region.httpsURL+" "+regionConf+"\n")
	memberCert := filepath.Join(region.state, "federation", "certs", "boxA.pem")

	constrain := func(lines string) {
		t.Helper()
		b, err := os.ReadFile(regionConf)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "ca = true\n", "ca = true\n"+lines, 1)
		if err := os.WriteFile(regionConf, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	constrain("ca_domains = [\"other.org\"]\n")
	if out, err := run(t, true, siteboxBin, "federation", "reissue-ca", "--config", regionConf); err == nil || !strings.Contains(out, "boxA.pem") {
		t.Fatalf("reissue under constraints boxA's certificate breaks: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(regionConf)
	os.WriteFile(regionConf, []byte(strings.Replace(string(b), "ca_domains = [\"other.org\"]\n", "", 1)), 0o644)
	constrain("ca_domains = [\"example.org\"]\nca_networks = [\"127.0.0.0/8\"]\n")

	late := director.Request{Member: director.Member{Name: "late", Roles: []string{director.RoleOrigin}, Prefixes: []string{"/store"},
		Root: "late.example.org:1094"}, Director: region.httpsURL}
	if out, err := run(t, true, siteboxBin, "federation", "approve", craftRequest(t, late), "--config", regionConf, "--yes"); err == nil || !strings.Contains(out, "reissue-ca") {
		t.Fatalf("approve under constraints the CA does not carry: %v\n%s", err, out)
	}
	run(t, false, siteboxBin, "federation", "reissue-ca", "--config", regionConf)
	caFile := director.CAFile(region.state)
	if out, _ := run(t, false, "openssl", "x509", "-noout", "-ext", "nameConstraints", "-in", caFile); !strings.Contains(out, "DNS:example.org") {
		t.Errorf("the re-issued CA carries: %s", out)
	}
	if out, err := run(t, true, "openssl", "verify", "-CAfile", caFile, memberCert); err != nil {
		t.Errorf("boxA's certificate under the re-issued CA: %v\n%s", err, out)
	}
	if out, err := run(t, true, "openssl", "verify", "-CAfile", caFile, forgeOutside(t, region.state, "evil.com")); err == nil {
		t.Errorf("a forged certificate outside verified: %s", out)
	}
	restart(t, region)
	for _, u := range []string{region.httpsURL + director.CAPath, boxA.httpsURL + "/store/"} {
		if out, err := run(t, true, "curl", "-sS", "--cacert", caFile, "-o", "/dev/null", u); err != nil {
			t.Errorf("curl %s trusting the re-issued CA: %v\n%s", u, err, out)
		}
	}
	if out, err := run(t, true, siteboxBin, "federation", "approve", craftRequest(t, late), "--config", regionConf, "--yes"); err != nil {
		t.Errorf("approve after reissue-ca: %v\n%s", err, out)
	}
}
