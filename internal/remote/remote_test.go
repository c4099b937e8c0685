package remote

import (
	"strings"
	"testing"

	"sitebox/internal/davclient"
	xrdclient "sitebox/internal/xrootd/client"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		raw, host, path string
		xrootd          bool
	}{
		{"root://h:1095//store/f", "h:1095", "/store/f", true},
		{"root://h//store/f?authz=x", "h:1094", "/store/f", true},
		{"xroot://h:1094//store", "h:1094", "/store", true},
		{"roots://h:1094/", "h:1094", "/", true},
		{"xroots://h", "h:1094", "/", true},
		{"https://h:8443/store/f", "h:8443", "/store/f", false},
		{"http://h/store/", "h", "/store", false},
		{"davs://h:8443/store/f", "h:8443", "/store/f", false},
	} {
		u, err := Parse(tc.raw)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.raw, err)
			continue
		}
		if u.Host != tc.host || u.Path != tc.path || u.XRootD() != tc.xrootd || u.Raw != tc.raw {
			t.Errorf("Parse(%q) = %+v (xrootd %v); want host %q path %q xrootd %v", tc.raw, u, u.XRootD(), tc.host, tc.path, tc.xrootd)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		"ftp://h:1/f":        "unsupported scheme",
		"/local/file":        "unsupported scheme",
		"root:///store/f":    "no host",
		"https://h/../x":     "",
		"root://h:1//a/\x00": "",
		"%zz://":             "not a URL",
	} {
		_, err := Parse(raw)
		if err == nil {
			t.Errorf("Parse(%q) accepted", raw)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want it to say %q", raw, err, want)
		}
	}
}

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"root://h//f": true, "roots://h//f": true, "xroot://h//f": true, "xroots://h//f": true,
		"http://h/f": true, "https://h/f": true, "davs://h/f": true,
		"ftp://h/f": false, "/tmp/f": false, "f": false, "root:/f": false,
	} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v, want %v", s, !want, want)
		}
	}
}

// Dial gives each protocol its client, with the options passed on.
func TestDialClients(t *testing.T) {
	for _, raw := range []string{"root://127.0.0.1:1", "xroots://127.0.0.1:1"} {
		c, err := Dial(raw, Options{Insecure: true})
		if err != nil {
			t.Fatalf("Dial(%q): %v", raw, err)
		}
		if _, ok := c.(*xrdclient.FS); !ok {
			t.Errorf("Dial(%q) = %T, want an XRootD client", raw, c)
		}
		c.Close()
	}
	for _, raw := range []string{"https://127.0.0.1:1", "davs://127.0.0.1:1/x", "http://127.0.0.1:1"} {
		c, err := Dial(raw, Options{})
		if err != nil {
			t.Fatalf("Dial(%q): %v", raw, err)
		}
		if _, ok := c.(*davclient.FS); !ok {
			t.Errorf("Dial(%q) = %T, want a WebDAV client", raw, c)
		}
		c.Close()
	}
	if _, err := Dial("roots://127.0.0.1:1", Options{CAFile: "/nonexistent/ca.pem"}); err == nil {
		t.Error("a missing CA file was accepted")
	}
}

func TestEncrypted(t *testing.T) {
	for _, s := range Schemes() {
		want := s == "roots" || s == "xroots" || s == "https" || s == "davs"
		if Encrypted(s) != want {
			t.Errorf("Encrypted(%q) = %v, want %v", s, !want, want)
		}
	}
}
