package box

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/fleet"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// The join request carries what the running box will advertise, so the
// approval matches its ads: the [advertise] URLs, else the listen
// addresses with a wildcard host made the hostname.
func TestJoinRequestMatchesTheAds(t *testing.T) {
	host, _ := os.Hostname()
	tests := []struct {
		name       string
		cfg        config.Config
		prefixes   []string
		root, http string
		roles      string
		err        string
	}{
		{name: "listen addresses", cfg: config.Config{
			Exports: []origin.Export{{Prefix: "/store"}},
			Root:    xrdserver.Settings{Addr: "127.0.0.1:1094"}, HTTPS: webdav.Settings{Addr: ":8443"}},
			root: "127.0.0.1:1094", http: "https://" + host + ":8443", roles: "origin"},
		{name: "advertised URLs, plain http", cfg: config.Config{
			Exports:   []origin.Export{{Prefix: "/store"}},
			Root:      xrdserver.Settings{Addr: "0.0.0.0:1"},
			HTTPS:     webdav.Settings{Addr: ":2", PlainHTTP: true},
			Advertise: fleet.AdvertiseSettings{RootURL: "root://box.example.org:1094"}},
			root: "box.example.org:1094", http: "http://" + host + ":2", roles: "origin"},
		{name: "port 0", cfg: config.Config{Exports: []origin.Export{{Prefix: "/store"}}, Root: xrdserver.Settings{Addr: "127.0.0.1:0"}},
			err: "set [advertise] root_url"},
		{name: "director without prefixes", cfg: config.Config{Director: director.Settings{Enabled: true}, Root: xrdserver.Settings{Addr: "127.0.0.1:1"}},
			err: "--prefix"},
		{name: "director with prefixes", cfg: config.Config{Director: director.Settings{Enabled: true}, Root: xrdserver.Settings{Addr: "127.0.0.1:1"}, HTTPS: webdav.Settings{Addr: config.Off}},
			prefixes: []string{"/store/t3"}, root: "127.0.0.1:1", roles: "director"},
		{name: "director beside an origin: the director's own listeners", cfg: config.Config{
			Director: director.Settings{Enabled: true, RootAddr: "127.0.0.1:1095", HTTPSAddr: ":8444"},
			Exports:  []origin.Export{{Prefix: "/store"}},
			Root:     xrdserver.Settings{Addr: "127.0.0.1:1094"}, HTTPS: webdav.Settings{Addr: ":8443"}},
			root: "127.0.0.1:1095", http: "https://" + host + ":8444", roles: "director,origin"},
		{name: "director beside an origin, port 0", cfg: config.Config{
			Director: director.Settings{Enabled: true, RootAddr: "127.0.0.1:0"},
			Exports:  []origin.Export{{Prefix: "/store"}}, Root: xrdserver.Settings{Addr: "127.0.0.1:1094"}},
			err: "set [director] root_url"},
		{name: "no role", cfg: config.Config{Root: xrdserver.Settings{Addr: "127.0.0.1:1"}}, err: "no role"},
		{name: "a wildcard endpoint, refused at join", cfg: config.Config{
			Exports:   []origin.Export{{Prefix: "/store"}},
			Advertise: fleet.AdvertiseSettings{RootURL: "root://*.example.org:1094"}},
			err: "is a wildcard"},
		{name: "the unspecified address, refused at join", cfg: config.Config{
			Exports:   []origin.Export{{Prefix: "/store"}},
			Advertise: fleet.AdvertiseSettings{RootURL: "root://[::]:1094"}},
			err: "unspecified address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Server = config.Server{Name: "box", StateDir: t.TempDir()}
			if cfg.HTTPS.Addr == "" {
				cfg.HTTPS.Addr = config.Off
			}
			r, text, err := JoinRequest(&cfg, "https://region:8443", tc.prefixes)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Root != tc.root || r.HTTPS != tc.http || strings.Join(r.Roles, ",") != tc.roles {
				t.Errorf("got root %q https %q roles %v", r.Root, r.HTTPS, r.Roles)
			}
			back, err := director.DecodeRequest(text)
			if err != nil || back.Key != r.Key || back.Name != "box" {
				t.Errorf("decoded %+v, %v", back, err)
			}
			fi, err := os.Stat(director.KeyFile(cfg.Server.StateDir))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("key file: %v %v", fi, err)
			}
		})
	}
}

// A director's ad names each prefix of the servers below it once.
func TestBelowPrefixesOnce(t *testing.T) {
	var servers []director.Ad
	for i := range 1000 {
		servers = append(servers, director.Ad{Name: fmt.Sprint("s", i), Prefixes: []string{"/scale"}})
	}
	servers = append(servers, director.Ad{Name: "other", Prefixes: []string{"/store/a", "/scale"}})
	if got := belowPrefixes(servers); !slices.Equal(got, []string{"/scale", "/store/a"}) {
		t.Errorf("prefixes %v, want [/scale /store/a]", got)
	}
	if got := belowPrefixes(nil); len(got) != 0 {
		t.Errorf("no servers below: prefixes %v", got)
	}
}
