package server

import (
	"strings"
	"testing"
	"time"

	"sitebox/internal/units"
)

// Validate names every [root] setting that is no address, no root://
// URL, no limit or too short a timeout, keyed as in the file.
func TestSettingsValidate(t *testing.T) {
	ok := Settings{Addr: "127.0.0.1:1094", DrainRedirect: "root://director.example.org:1094",
		Limits:         Limits{Sessions: -1, OpenFilesPerSession: 10, SubstreamsPerSession: 15},
		RequestTimeout: units.Duration(time.Second), IdleTimeout: units.Duration(90 * time.Second)}
	if ps := ok.Validate(); len(ps) != 0 {
		t.Fatalf("valid settings: %v", ps)
	}
	bad := Settings{Addr: "1094", DrainRedirect: "https://director.example.org:1094",
		Limits:         Limits{SessionsPerNetwork: -2, OpenFiles: -5, SubstreamsPerSession: 16},
		RequestTimeout: units.Duration(500 * time.Millisecond), WriteTimeout: units.Duration(-time.Second), IdleTimeout: units.Duration(10 * time.Millisecond)}
	want := map[string]string{
		"root.addr":                       `"1094" is not host:port`,
		"root.drain_redirect":             `scheme must be root`,
		"root.max_sessions_per_network":   `-2 is not a limit (a positive number; 0 for the default, -1 for none)`,
		"root.max_open_files":             `-5 is not a limit`,
		"root.max_substreams_per_session": `16 is not a limit (1 to 15, the protocol's most; 0 for the default 15)`,
		"root.request_timeout":            `"500ms" is not a duration of at least 1s`,
		"root.write_timeout":              `"-1s" is not a duration of at least 1s`,
		"root.idle_timeout":               `"10ms" is not a duration of at least 1s`,
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

// DrainTo is the drain_redirect URL's host:port, the form a redirect
// names.
func TestSettingsDrainTo(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"root://director.example.org:1094": "director.example.org:1094",
		"root://[::1]:1095/":               "[::1]:1095",
		"root://nowhere":                   "",
	} {
		s := Settings{DrainRedirect: in}
		if got := s.DrainTo(); got != want {
			t.Errorf("DrainTo(%q) = %q, want %q", in, got, want)
		}
	}
}

// A timeout left at 0 is unset and takes the server's default (a "0s"
// written in the file is refused by the config's type check, see
// config.TestFrontendZeroDurations); a director's listener keeps idle
// sessions longer.
func TestSettingsZeroTimeout(t *testing.T) {
	s := Settings{RequestTimeout: 0}
	if ps := s.Validate(); len(ps) != 0 {
		t.Errorf("unset request_timeout: %v", ps)
	}
	c := Config{Settings: s}
	c.defaults()
	if c.RequestTimeout.D() != time.Minute || c.WriteTimeout.D() != time.Minute || c.IdleTimeout.D() != defaultIdleTimeout {
		t.Errorf("defaults: request %v, write %v, idle %v", c.RequestTimeout, c.WriteTimeout, c.IdleTimeout)
	}
	m := Config{Manager: true}
	m.defaults()
	if m.IdleTimeout.D() != defaultManagerIdleTimeout {
		t.Errorf("director's idle timeout %v, want %v", m.IdleTimeout, defaultManagerIdleTimeout)
	}
}
