package problem

import (
	"strings"
	"testing"
	"time"
)

// CheckAddr takes what net.Listen takes and "off"; it names what is
// wrong with anything else.
func TestCheckAddr(t *testing.T) {
	for addr, want := range map[string]string{
		"":                          "",
		"off":                       "",
		":1094":                     "",
		"127.0.0.1:0":               "",
		"[::1]:8443":                "",
		"localhost:1094":            "",
		"1094":                      `"1094" is not host:port (e.g. "0.0.0.0:1094" or ":1094"; "off" disables)`,
		"localhost:99999":           `port "99999" in "localhost:99999" is not a number from 0 to 65535`,
		":https":                    `port "https" in ":https" is not a number`,
		"no-such-host.invalid:1094": `host "no-such-host.invalid" in "no-such-host.invalid:1094" does not resolve`,
	} {
		if got := CheckAddr(addr); (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("CheckAddr(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestCheckLimitAndAtLeast(t *testing.T) {
	for v, bad := range map[int]bool{-2: true, -1: false, 0: false, 7: false} {
		if got := CheckLimit(v); (got != "") != bad {
			t.Errorf("CheckLimit(%d) = %q", v, got)
		}
	}
	if got := CheckAtLeast(500*time.Millisecond, time.Second); got != `"500ms" is not a duration of at least 1s (e.g. "1m")` {
		t.Errorf("CheckAtLeast(500ms) = %q", got)
	}
	if got := CheckAtLeast(time.Second, time.Second); got != "" {
		t.Errorf("CheckAtLeast(1s) = %q", got)
	}
}
