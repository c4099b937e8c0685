package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The [root] limits and timeouts decode straight into the root://
// server's settings; values that are no limit or no duration are
// reported by key.
func TestRootLimits(t *testing.T) {
	dir := t.TempDir()
	export := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n"
	cfg, _, err := Parse("ok.toml", []byte(`[root]
max_sessions_per_network = 100
max_open_files_per_network = -1
idle_timeout = "90s"
`+export))
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Root.Limits; l.SessionsPerNetwork != 100 || l.OpenFilesPerNetwork != -1 || cfg.Root.IdleTimeout.D() != 90*time.Second {
		t.Fatalf("server settings %+v, idle timeout %v", l, cfg.Root.IdleTimeout)
	}

	_, _, err = Parse("bad.toml", []byte(`[root]
max_sessions_per_network = -2
max_open_files_per_network = -5
idle_timeout = "10ms"
`+export))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	got := map[string]bool{}
	for _, p := range ps.List {
		got[p.Key] = true
	}
	for _, k := range []string{"root.max_sessions_per_network", "root.max_open_files_per_network", "root.idle_timeout"} {
		if !got[k] {
			t.Errorf("no problem reported for %s: %v", k, ps.List)
		}
	}
}

// A bad [root] or [https] timeout or address is named at its line, in
// words that say what to write instead.
func TestFrontendProblemsAtTheirLines(t *testing.T) {
	dir := t.TempDir()
	ps := problemsIn(t, "bad.toml", `[root]
request_timeout = "soon"
write_timeout = 30

[https]
addr = "8443"
header_timeout = "500ms"
body_timeout = "-1s"
max_conns_per_client = -3

[[export]]
prefix = "/store"
pools = ["`+dir+`"]
`)
	want := map[string]struct {
		line int
		msg  string
	}{
		"root.request_timeout":       {2, `root.request_timeout: "soon" is not a duration (examples: 30s, 10m, 1h)`},
		"root.write_timeout":         {3, `root.write_timeout: want a duration in quotes (e.g. "30s"), found the number 30`},
		"https.addr":                 {6, `https.addr: "8443" is not host:port (e.g. "0.0.0.0:1094" or ":1094"; "off" disables)`},
		"https.header_timeout":       {7, `https.header_timeout: "500ms" is not a duration of at least 1s (e.g. "1m")`},
		"https.body_timeout":         {8, `https.body_timeout: "-1s" is not a duration of at least 1s (e.g. "1m")`},
		"https.max_conns_per_client": {9, `https.max_conns_per_client: -3 is not a limit (a positive number; 0 for the default, -1 for none)`},
	}
	for _, p := range ps.List {
		w, ok := want[p.Key]
		if !ok {
			t.Errorf("unexpected problem %v", p)
			continue
		}
		if p.Line != w.line || !strings.HasSuffix(p.String(), w.msg) {
			t.Errorf("got %q, want line %d: %s", p.String(), w.line, w.msg)
		}
		delete(want, p.Key)
	}
	for k := range want {
		t.Errorf("no problem reported for %s: %v", k, ps.List)
	}
}

// A "0s" written for a frontend timeout or an [auth] duration is named
// at its line, once, with the range the setting takes, rather than taken
// for "unset" and silently given the default.
func TestFrontendZeroDurations(t *testing.T) {
	dir := t.TempDir()
	ps := problemsIn(t, "zero.toml", `[root]
request_timeout = "0s"
write_timeout = "0s"
idle_timeout = "0s"
[https]
header_timeout = "0s"
body_timeout = "0s"
[auth]
site_issuer = true
clock_skew = "0s"
max_token_lifetime = "0s"
[auth.x509]
cert_dir = "`+dir+`"
voms_dir = "`+dir+`"
refresh = "0s"
[[export]]
prefix = "/store"
pools = ["`+dir+`"]
`)
	want := []string{
		`line 2: root.request_timeout: "0s" is not a duration of at least 1s (leave the setting out for its default)`,
		`line 3: root.write_timeout: "0s" is not a duration of at least 1s (leave the setting out for its default)`,
		`line 4: root.idle_timeout: "0s" is not a duration of at least 1s (leave the setting out for its default)`,
		`line 6: https.header_timeout: "0s" is not a duration of at least 1s (leave the setting out for its default)`,
		`line 7: https.body_timeout: "0s" is not a duration of at least 1s (leave the setting out for its default)`,
		`line 10: auth.clock_skew: "0s" is not a positive duration of at most 1h (leave the setting out for its default)`,
		`line 11: auth.max_token_lifetime: "0s" is not a duration between 1m and 8760h (leave the setting out for its default)`,
		`line 15: auth.x509.refresh: "0s" is not a duration between 1m and 24h (leave the setting out for its default)`,
	}
	var got []string
	for _, p := range ps.List {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
