package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorExitCodes runs the command on config files: a healthy box
// (nothing listening is configured) exits 0, a closed port or a config
// mistake exits 2, and --json prints the report.
func TestDoctorExitCodes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	pool, state := t.TempDir(), t.TempDir()
	write := func(root, pools string) string {
		f := filepath.Join(t.TempDir(), "site.toml")
		os.WriteFile(f, []byte(`[server]
state_dir = "`+state+`"
[root]
addr = "`+root+`"
[https]
addr = "off"
[[export]]
prefix = "/store"
pools = ["`+pools+`"]
`), 0o644)
		return f
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
		text string
	}{
		{"healthy", []string{"--config", write("off", pool)}, 0, "0 error(s)"},
		{"closed port", []string{"--config", write(closed, pool)}, 2, "nothing listens on " + closed},
		{"config mistake", []string{"--config", write("off", "/no/such/pool")}, 2, "export[1].pools"},
		{"json", []string{"--config", write(closed, pool), "--json"}, 2, `"status": "error"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := -1
			cmd := newDoctorCmd(func(c int) { code = c })
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if code == -1 {
				code = 0
			}
			if code != tc.want || !strings.Contains(out.String(), tc.text) {
				t.Errorf("exit %d (want %d), output lacks %q?\n%s", code, tc.want, tc.text, out.String())
			}
			if tc.name == "json" {
				var r struct{ Checks []map[string]any }
				if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Checks) == 0 {
					t.Errorf("not a JSON report: %v", err)
				}
			}
		})
	}
}

func TestDoctorBadSpeed(t *testing.T) {
	cmd := newDoctorCmd(func(int) { t.Error("exit called") })
	cmd.SilenceErrors = true
	cmd.SetArgs([]string{"--network-speed", "fast"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "10Gbit") {
		t.Errorf("bad --network-speed: %v", err)
	}
}
