package box

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/web"
	"sitebox/internal/webdav"
	"sitebox/internal/x509grid/x509test"
	xrdserver "sitebox/internal/xrootd/server"
)

var pki x509test.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pki.Remove()
	os.Exit(code)
}

// certClient presents the proxy file's chain ("" none) to the box,
// trusting any server certificate (the box's is self-signed).
func certClient(t *testing.T, proxy string) *http.Client {
	t.Helper()
	tc := &tls.Config{InsecureSkipVerify: true}
	if proxy != "" {
		c, err := tls.LoadX509KeyPair(proxy, proxy)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
}

func getBody(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A box with [auth.x509] asks https clients for certificates (roots://
// keeps its TLS config), serves a VO namespace to a VOMS proxy, and
// shows the dashboard's names to an operator known by DN.
func TestBoxTakesClientCertificates(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, nil)
	bob := b.OpenSSLProxy(p.Bob, "proxy")
	b.OK(t)
	pool := t.TempDir()
	os.MkdirAll(filepath.Join(pool, "vo"), 0o755)
	os.WriteFile(filepath.Join(pool, "vo", "f"), []byte("vo data"), 0o644)
	box := runBox(t, &config.Config{
		Server:  config.Server{StateDir: t.TempDir()},
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{pool}}},
		Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:   webdav.Settings{Addr: "127.0.0.1:0"},
		Auth: auth.Settings{
			X509:       &auth.X509Settings{CertDir: p.CADir, VOMSDir: p.VOMSDir},
			Namespaces: []auth.NamespaceEntry{{Prefix: "/store/vo", Read: "vo", VOs: []string{x509test.TestVO}}},
			Operators:  []auth.OperatorEntry{{Issuer: "x509:" + x509test.RootDN, Subject: x509test.BobDN}},
		},
	})
	if box.data.https.TLSConfig.ClientAuth != tls.RequestClientCert {
		t.Errorf("https ClientAuth = %v, want RequestClientCert", box.data.https.TLSConfig.ClientAuth)
	}
	if shared := (&tls.Config{}); box.httpsTLS(shared) == shared || shared.ClientAuth != tls.NoClientCert {
		t.Error("the https listener's TLS config is the one roots:// shares")
	}
	base := "https://" + box.HTTPSAddr().String()
	if code, body := getBody(t, certClient(t, vp.Chain), base+"/store/vo/f"); code != 200 || body != "vo data" {
		t.Errorf("VOMS proxy: %d %q", code, body)
	}
	if code, body := getBody(t, certClient(t, ""), base+"/store/vo/f"); code != 403 || !strings.Contains(body, "requires a bearer token") {
		t.Errorf("no certificate: %d %q", code, body)
	}
	snapshot := func(proxy string) web.Snapshot {
		code, body := getBody(t, certClient(t, proxy), base+web.SnapshotPath)
		var s web.Snapshot
		if code != 200 || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("snapshot: %d %s", code, body)
		}
		return s
	}
	if s := snapshot(bob.Chain); s.NamesHidden || !strings.Contains(s.Operator, x509test.BobDN) {
		t.Errorf("operator by certificate: hidden %v, operator %q (%s)", s.NamesHidden, s.Operator, s.NamesHiddenWhy)
	}
	if s := snapshot(vp.Chain); !s.NamesHidden || !strings.Contains(s.NamesHiddenWhy, "not listed in [[auth.operator]]") {
		t.Errorf("a user's certificate: hidden %v, why %q", s.NamesHidden, s.NamesHiddenWhy)
	}
}
