package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// built is the one build of cmd/sitebox the tests share when SITEBOX_BIN
// is not set; TestMain removes it.
var built peers.SiteboxBuild

// siteboxBinary is SITEBOX_BIN (scripts/test.sh sets it), else a build
// of cmd/sitebox made once for the whole test binary.
func siteboxBinary(t *testing.T) string { return built.Binary(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	built.Remove()
	os.Exit(code)
}

// TestAuthBenchEndToEnd runs the whole benchmark small against the real
// clients: every row must move bytes and the refusals that prove the
// protected rows must hold.
func TestAuthBenchEndToEnd(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl", "openssl"} {
		peers.Require(t, tool)
	}
	bin := siteboxBinary(t)
	var progress bytes.Buffer
	// A guard against a hang, not a time target: the gsi rows alone are
	// 120 fresh logins, each a client's RSA and DH work, which a loaded
	// machine runs at about one a second.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	rep, err := Auth(ctx, AuthConfig{Sitebox: bin, WorkDir: t.TempDir(), FileSize: 16 << 20, Rounds: 1, Out: &progress})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	table := FormatAuth(rep)
	t.Logf("\n%s", table)

	for _, proto := range []string{"root", "https"} {
		for _, level := range authLevels {
			t.Run(proto+"/"+level, func(t *testing.T) {
				var found []AuthRow
				for _, r := range rep.Rows {
					if r.Proto == proto && r.Level == level && !r.Variant {
						found = append(found, r)
					}
				}
				if len(found) != 1 {
					t.Fatalf("%d main rows, want 1", len(found))
				}
				if r := found[0]; r.MBps <= 0 || len(r.Runs) != 1 {
					t.Errorf("%.1f MB/s over %d runs, want > 0 over 1", r.MBps, len(r.Runs))
				}
				if !strings.Contains(table, "| "+protoLabel(proto)+" | "+level+" | "+found[0].How+" |") {
					t.Errorf("table has no row for %s %s", proto, level)
				}
			})
		}
	}
	if !rep.ChecksPassed() {
		t.Errorf("refusal checks proving the protected rows failed: %+v", rep.Checks)
	}
	for _, c := range rep.Checks {
		switch {
		case c.Refused:
		case c.Proof:
			t.Errorf("not refused: %s: %s", c.What, c.Detail)
		default:
			// Policy checks beside the measured paths (plain http:// of
			// protected namespaces) are reported, not asserted here.
			t.Logf("policy check not refused: %s: %s", c.What, c.Detail)
		}
	}
	if rep.PeakRSS["box"] <= 0 || rep.PeakRSS["plain"] <= 0 {
		t.Errorf("peak RSS not measured: %v", rep.PeakRSS)
	}
}

// The cost is against the same protocol's unprotected main row, and the
// target verdict appears on privacy rows only.
func TestFormatAuthCosts(t *testing.T) {
	rep := &AuthReport{
		Config: AuthConfig{FileSize: 1 << 30, Rounds: 3}, CPUs: 2,
		Rows: []AuthRow{
			{Server: "sitebox", Proto: "root", Level: "none", How: "a", MBps: 1000, Runs: []float64{990, 1000, 1010}},
			{Server: "sitebox", Proto: "root", Level: "integrity", How: "b", MBps: 800},
			{Server: "sitebox", Proto: "root", Level: "privacy", How: "c", MBps: 900},
			{Server: "sitebox", Proto: "https", Level: "none", How: "d", MBps: 500},
			{Server: "sitebox", Proto: "https", Level: "privacy", How: "e", MBps: 200},
			{Server: "sitebox", Proto: "https", Level: "privacy", How: "f", MBps: 450, Variant: true},
			{Server: "xrootd", Proto: "root", Level: "none", How: "g", MBps: 2000, Variant: true},
			{Server: "xrootd", Proto: "root", Level: "privacy", How: "h", MBps: 1000, Variant: true, ServerCPU: 0.5, ClientCPU: 0.25},
		},
		Checks: []AuthCheck{{What: "x", Proof: true, Refused: true, Detail: "no"}},
	}
	tests := []struct {
		name string
		row  int
		want float64
	}{
		{"integrity vs root none", 1, 0.2},
		{"privacy vs root none", 2, 0.1},
		{"privacy vs https none", 4, 0.6},
		{"variant vs https none", 5, 0.1},
		{"peer against its own none", 7, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rep.Cost(rep.Rows[tt.row])
			if !ok || got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("cost %v (ok %t), want %v", got, ok, tt.want)
			}
		})
	}
	out := FormatAuth(rep)
	for _, want := range []string{
		"| root:// | none | a | 1000 | 990, 1000, 1010 | — |  |  |",
		"| root:// | integrity | b | 800 |  | 20.0 % |  |  |",
		"| root:// | privacy | c | 900 |  | 10.0 % | 10.0 % ✓ |  |",
		"| https:// | privacy | e | 200 |  | 60.0 % | 60.0 % ✗ |  |",
		"| https:// | privacy | f *(variant)* | 450 |  | 10.0 % | 10.0 % ✓ |  |",
		"| root:// | privacy | h *(variant)* | 1000 |  | 50.0 % | 50.0 % ✗ | 0.50 + 0.25 = 0.75 |",
		"root:// 10.0 % ✓; https:// 60.0 % ✗",
		"x: ✓ refused — no",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	rep.Checks[0].Refused = false
	if rep.ChecksPassed() || !strings.Contains(FormatAuth(rep), "may not measure the protected path") {
		t.Error("a failed proof check is not flagged")
	}
}
