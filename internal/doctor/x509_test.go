package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/config"
)

// The doctor reports the X.509 trust stores: skipped without [auth.x509],
// an error when the CA directory refuses every credential, a warning
// for a VO a namespace needs that the vomsdir lacks.
func TestCheckX509(t *testing.T) {
	o := &Options{Now: time.Now}
	if cs := checkX509(context.Background(), &config.Config{}, o); len(cs) != 1 || cs[0].Status != StatusSkip {
		t.Errorf("without [auth.x509]: %+v", cs)
	}
	dir := t.TempDir()
	certs, voms := filepath.Join(dir, "certificates"), filepath.Join(dir, "vomsdir")
	os.Mkdir(certs, 0o755)
	os.Mkdir(voms, 0o755)
	cfg := &config.Config{Auth: auth.Settings{
		X509:       &auth.X509Settings{CertDir: certs, VOMSDir: voms, CRL: "try"},
		Namespaces: []auth.NamespaceEntry{{Prefix: "/store/cms", Read: "vo", VOs: []string{"cms"}}},
	}}
	cs := checkX509(context.Background(), cfg, o)
	if len(cs) != 2 {
		t.Fatalf("checks %+v", cs)
	}
	if c := cs[0]; c.Status != StatusError || !strings.Contains(c.Summary, "holds no CA certificate") || !strings.Contains(c.Fix, "IGTF") {
		t.Errorf("empty CA directory: %+v", c)
	}
	if c := cs[1]; c.Status != StatusWarn || !strings.Contains(c.Summary, "VOMS proxies of cms are refused on /store/cms") || !strings.Contains(c.Fix, voms+"/cms/") {
		t.Errorf("missing VO: %+v", c)
	}
}

// The doctor reports each robot proxy the box presents upstream, an
// error naming why when it cannot serve.
func TestCheckProxies(t *testing.T) {
	o := &Options{Now: time.Now}
	if cs := checkProxies(context.Background(), &config.Config{}, o); len(cs) != 0 {
		t.Errorf("without proxies: %+v", cs)
	}
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	os.WriteFile(garbage, []byte("hello\n"), 0o600)
	cfg := &config.Config{}
	cfg.TPC.ProxyFile, cfg.TPC.ProxyHosts = garbage, []string{"se.example.org"}
	cs := checkProxies(context.Background(), cfg, o)
	if len(cs) != 1 || cs[0].Name != "tpc.proxy_file" || cs[0].Status != StatusError || !strings.Contains(cs[0].Summary, "no certificate") {
		t.Errorf("a file without a proxy: %+v", cs)
	}
	cfg.TPC.ProxyFile = filepath.Join(dir, "missing.pem")
	if cs := checkProxies(context.Background(), cfg, o); len(cs) != 1 || cs[0].Status != StatusError || !strings.Contains(cs[0].Summary, "no such file") {
		t.Errorf("a missing file: %+v", cs)
	}
}
