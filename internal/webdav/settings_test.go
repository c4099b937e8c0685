package webdav

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/units"
)

// Validate names every [https] setting that is no address, half a
// certificate pair, an unreadable file, no limit or too short a
// timeout, keyed as in the file.
func TestSettingsValidate(t *testing.T) {
	cert := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(cert, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Settings{Addr: ":8443", Cert: cert, Key: cert, MaxConnsPerClient: -1,
		HeaderTimeout: units.Duration(time.Second), BodyTimeout: units.Duration(time.Minute)}
	if ps := ok.Validate(); len(ps) != 0 {
		t.Fatalf("valid settings: %v", ps)
	}
	bad := Settings{Addr: "localhost:http-alt", Key: "/no/such/key.pem", MaxConnsPerNetwork: -2,
		HeaderTimeout: units.Duration(500 * time.Millisecond), BodyTimeout: units.Duration(-time.Second)}
	want := map[string]string{
		"https.addr":                  `port "http-alt" in "localhost:http-alt" is not a number from 0 to 65535`,
		"https.cert":                  `cert and key must be given together`,
		"https.key":                   `cannot read /no/such/key.pem: no such file or directory`,
		"https.max_conns_per_network": `-2 is not a limit (a positive number; 0 for the default, -1 for none)`,
		"https.header_timeout":        `"500ms" is not a duration of at least 1s (e.g. "1m")`,
		"https.body_timeout":          `"-1s" is not a duration of at least 1s`,
	}
	for _, p := range bad.Validate() {
		if w, ok := want[p.Key]; !ok || !strings.Contains(p.Msg, w) {
			t.Errorf("%s: got %q, want %q", p.Key, p.Msg, w)
		}
		delete(want, p.Key)
	}
	for k := range want {
		t.Errorf("no problem reported for %s", k)
	}
}

// Unset timeouts and limits take the frontend's defaults.
func TestSettingsDefaults(t *testing.T) {
	var s Settings
	if s.ReadHeaderTimeout() != 30*time.Second || s.ConnsPerClient() != 512 || s.ConnsPerNetwork() != 1024 {
		t.Errorf("defaults: header %v, per client %d, per network %d", s.ReadHeaderTimeout(), s.ConnsPerClient(), s.ConnsPerNetwork())
	}
	s = Settings{HeaderTimeout: units.Duration(5 * time.Second), MaxConnsPerClient: -1}
	if s.ReadHeaderTimeout() != 5*time.Second || s.ConnsPerClient() != 0 || s.ConnsPerNetwork() != 0 {
		t.Errorf("set: header %v, per client %d, per network %d", s.ReadHeaderTimeout(), s.ConnsPerClient(), s.ConnsPerNetwork())
	}
}

// A timeout left at 0 is unset and takes its default (a "0s" written in
// the file is refused by the config's type check, see
// config.TestFrontendZeroDurations).
func TestSettingsZeroTimeout(t *testing.T) {
	s := Settings{HeaderTimeout: 0}
	if ps := s.Validate(); len(ps) != 0 {
		t.Errorf("unset header_timeout: %v", ps)
	}
	if s.ReadHeaderTimeout() != 30*time.Second || s.bodyTimeout() != time.Minute {
		t.Errorf("defaults: header %v, body %v", s.ReadHeaderTimeout(), s.bodyTimeout())
	}
}
