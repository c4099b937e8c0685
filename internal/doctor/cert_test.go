package doctor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/config"
)

func TestCertificate(t *testing.T) {
	now := time.Now()
	day := 24 * time.Hour
	for _, tc := range []struct {
		name        string
		from, until time.Time
		hosts       []string
		advertise   string
		want        []Status
		texts       []string
	}{
		{"valid self-signed", now.Add(-day), now.Add(365 * day), []string{"127.0.0.1"}, "",
			[]Status{StatusOK}, []string{"days left", "self-signed", "curl --cacert", "X509_CERT_DIR"}},
		{"expired", now.Add(-30 * day), now.Add(-3 * day), []string{"127.0.0.1"}, "",
			[]Status{StatusError}, []string{"expired on", "3 days ago", "Restart the box"}},
		{"expires soon", now.Add(-day), now.Add(5 * day), []string{"127.0.0.1"}, "",
			[]Status{StatusWarn}, []string{"in 5 days"}},
		{"not yet valid", now.Add(day), now.Add(10 * day), []string{"127.0.0.1"}, "",
			[]Status{StatusError}, []string{"not valid until", "clock"}},
		{"wrong name", now.Add(-day), now.Add(365 * day), []string{"127.0.0.1", "localhost"}, "https://t3.example.org:8443",
			[]Status{StatusOK, StatusWarn}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t, config.Off, "127.0.0.1:8443")
			cfg.Advertise.HTTPSURL = tc.advertise
			path := writeCert(t, filepath.Join(cfg.Server.StateDir, "tls"), tc.from, tc.until, tc.hosts...)
			cs := checkCertificate(context.Background(), cfg, Options{}.withDefaults())
			if len(cs) != len(tc.want) {
				t.Fatalf("want %d checks, got %+v", len(tc.want), cs)
			}
			mustHave(t, cs[0], tc.want[0], tc.texts...)
			if cs[0].Name != path {
				t.Errorf("check named %q, want the file %s", cs[0].Name, path)
			}
			if len(cs) > 1 {
				mustHave(t, cs[1], tc.want[1], "clients connect to t3.example.org", "valid for localhost, 127.0.0.1")
			}
		})
	}
}

func TestCertificateNotYetMade(t *testing.T) {
	cfg := baseConfig(t, config.Off, "127.0.0.1:8443")
	cs := checkCertificate(context.Background(), cfg, Options{}.withDefaults())
	mustHave(t, cs[0], StatusOK, "first start")
}

func TestCertificateConfiguredMissing(t *testing.T) {
	cfg := baseConfig(t, config.Off, "127.0.0.1:8443")
	cfg.HTTPS.Cert, cfg.HTTPS.Key = "/no/such/cert.pem", "/no/such/key.pem"
	cs := checkCertificate(context.Background(), cfg, Options{}.withDefaults())
	mustHave(t, cs[0], StatusError, "cannot read the certificate", "no such file")
}
