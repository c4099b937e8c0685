package box

import (
	"strings"
	"testing"

	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/fleet"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// A join request is for this director when its URL names one of the
// director's names and its https port; the director's names and
// endpoints are those approve keeps from members.
func TestCheckAddressedHere(t *testing.T) {
	cfg := &config.Config{
		Server:    config.Server{Name: "region", StateDir: t.TempDir()},
		Director:  director.Settings{Enabled: true, CA: true},
		Root:      xrdserver.Settings{Addr: "127.0.0.1:1094"},
		HTTPS:     webdav.Settings{Addr: "0.0.0.0:8443"},
		Advertise: fleet.AdvertiseSettings{HTTPSURL: "https://region.example.org"},
	}
	for url, want := range map[string]string{
		"https://region.example.org":        "",
		"https://REGION.example.org:443":    "",
		"https://region.example.org:8443":   "",
		"https://127.0.0.1:8443":            "",
		"https://region.example.org:9443":   "not to this director",
		"https://other.example.org:8443":    "not to this director",
		"":                                  "names no director",
		"root://region.example.org:1094":    "no director URL",
		"https://region.example.org:8443/x": "",
	} {
		err := CheckAddressedHere(cfg, url)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", url, err, want)
		}
	}
	p, err := ApprovalPolicy(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range []string{"127.0.0.1:1094", "region.example.org:443"} {
		if !strings.Contains(strings.Join(p.OwnEndpoints, " "), ep) {
			t.Errorf("own endpoints %v lack %s", p.OwnEndpoints, ep)
		}
	}
	if err := p.Check(director.Member{Name: "m", Root: "region.example.org:2000"}, nil); err == nil || !strings.Contains(err.Error(), "this director's own name") {
		t.Errorf("a member claiming the director's name: %v", err)
	}
}
