package config

import (
	"errors"
	"strings"
	"testing"
)

// Every value of the wrong type is named in one run, with its line and in
// plain words, beside the unknown settings and the other problems; the
// values removed for their type are not named twice.
func TestTypeProblemsAllAtOnce(t *testing.T) {
	src := `[server]
name = "t"
state_dir = 5
log_level = true
log_format = "xml"

[root]
addr = 1094

[https]
bogus = 1

[[export]]
prefix = "/store"
pools = "/tmp"

[[export]]
prefix = "/other"
pools = ["/tmp", 3]
read_only = "yes"
`
	_, _, err := Parse("bad.toml", []byte(src))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		`line 3: server.state_dir: want text in quotes, found the number 5`,
		`line 4: server.log_level: want text in quotes, found true`,
		`line 5: server.log_format: "xml" is not a log format`,
		`line 8: root.addr: want text in quotes, found the number 1094`,
		`line 11: https.bogus: unknown setting`,
		`line 15: export[1].pools: want a list [ … ] of texts in quotes, found the text "/tmp"`,
		`line 19: export[2].pools[2]: want text in quotes, found the number 3`,
		`line 20: export[2].read_only: want true or false, found the text "yes"`,
	}
	got := ps.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	if len(ps.List) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(ps.List), len(want), got)
	}
	if strings.Contains(got, "cannot decode") {
		t.Errorf("the TOML library's text leaked:\n%s", got)
	}
}

// A site issuer also listed as [[auth.issuer]] (serve would exit) and an
// issuer listed twice are named by config check.
func TestCrossSectionIssuers(t *testing.T) {
	src := `[server]
name = "t"
state_dir = "` + t.TempDir() + `"
[[export]]
prefix = "/store"
pools = ["` + t.TempDir() + `"]
[auth]
site_issuer = true
issuer_url = "https://box.example.org:8443"
[[auth.issuer]]
url = "https://box.example.org:8443/"
[[auth.issuer]]
url = "https://idp.example.org"
[[auth.issuer]]
url = "https://idp.example.org"
`
	_, _, err := Parse("cross.toml", []byte(src))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	got := ps.Error()
	for _, w := range []string{
		`line 11: auth.issuer[1].url: "https://box.example.org:8443/" is this box's own site issuer`,
		`line 15: auth.issuer[3].url: "https://idp.example.org" is listed twice`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
}

// Two listeners on one port, and a site issuer without its key, stop
// serve: config check names them.
func TestListenerClashAndIssuerKey(t *testing.T) {
	state := t.TempDir()
	src := `[server]
name = "t"
state_dir = "` + state + `"
metrics_addr = "127.0.0.1:8443"
[root]
addr = "0.0.0.0:1094"
[https]
addr = ":8443"
[[export]]
prefix = "/store"
pools = ["` + t.TempDir() + `"]
[auth]
site_issuer = true
`
	_, _, err := Parse("clash.toml", []byte(src))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	got := ps.Error()
	for _, w := range []string{
		`line 4: server.metrics_addr: "127.0.0.1:8443" uses port 8443, as https.addr ":8443" does`,
		`auth.site_issuer: cannot read the site issuer's key ` + state + `/issuer/issuer.key: no such file or directory; make it with`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	if strings.Contains(got, "root.addr") {
		t.Errorf("root:// on another port clashes:\n%s", got)
	}
}
