package doctor

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/config"
)

// tlsPeer starts an HTTPS server on 127.0.0.1 answering 200 on "/" and
// 404 elsewhere, and returns it with a PEM file of its certificate.
func tlsPeer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the unknown-CA case fails handshakes on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	return srv, ca
}

func TestDirectorReachAndSkew(t *testing.T) {
	srv, ca := tlsPeer(t)
	for _, tc := range []struct {
		name  string
		skew  time.Duration // how far this box's clock is behind
		ca    string
		want  Status
		texts []string
	}{
		{"in sync", 0, ca, StatusOK, []string{"reachable (HTTP 200", "clocks agree"}},
		{"drifting", 10 * time.Second, ca, StatusWarn, []string{"10s behind director's", "timedatectl set-ntp true"}},
		{"far off", 2 * time.Minute, ca, StatusError, []string{"2m0s behind", "nbf", "exp"}},
		{"ahead", -3 * time.Minute, ca, StatusError, []string{"3m0s ahead of"}},
		{"unknown CA", 0, "", StatusError, []string{"authority this box does not trust", "[advertise] ca", "tls/cert.pem"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t, config.Off, config.Off)
			cfg.Advertise.To = []string{srv.URL}
			cfg.Advertise.CA = tc.ca
			o := Options{Now: func() time.Time { return time.Now().Add(-tc.skew) }}.withDefaults()
			cs := checkPeers(context.Background(), cfg, o)
			if len(cs) != 1 {
				t.Fatalf("want 1 check, got %+v", cs)
			}
			mustHave(t, cs[0], tc.want, tc.texts...)
		})
	}
}

func TestIssuers(t *testing.T) {
	srv, ca := tlsPeer(t)
	down := "https://" + closedPort(t)
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Auth.CA = ca
	cfg.Auth.Issuers = []auth.IssuerEntry{
		{URL: srv.URL},                         // no discovery document: 404
		{URL: srv.URL, JWKSURL: srv.URL + "/"}, // keys URL given
		{URL: down},
		{URL: "https://offline.example", JWKS: "/etc/keys.json"},
	}
	cs := checkPeers(context.Background(), cfg, Options{Timeout: 2 * time.Second}.withDefaults())
	if len(cs) != 4 {
		t.Fatalf("want 4 checks, got %+v", cs)
	}
	mustHave(t, cs[0], StatusSkip, "/etc/keys.json")
	mustHave(t, cs[1], StatusWarn, "HTTP 404", "/.well-known/openid-configuration", "jwks_url")
	mustHave(t, cs[2], StatusOK, "reachable")
	mustHave(t, cs[3], StatusError, "connection refused", "refuses that issuer's tokens")
}

func TestPeersNone(t *testing.T) {
	cs := checkPeers(context.Background(), baseConfig(t, config.Off, config.Off), Options{}.withDefaults())
	mustHave(t, cs[0], StatusSkip)
}
