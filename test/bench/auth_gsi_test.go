package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// The gsi rows log in with a real VOMS proxy, to the box (which proves
// every connection took gsi, authConnectGSI checks its log) and to
// xrootd 5.5, and the report sets them side by side.
func TestAuthConnectGSI(t *testing.T) {
	for _, tool := range []string{"xrdfs", "xrootd", "openssl", "voms-proxy-fake"} {
		peers.Require(t, tool)
	}
	peers.RequireFile(t, libXrdVoms, "XRootD's VOMS plugin (xrootd-voms-plugins)")
	bin := siteboxBinary(t)
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	if err := makeAuthFiles(pool, 1<<20); err != nil {
		t.Fatal(err)
	}
	// A guard against a hang (120 logins, about one a second on a
	// loaded machine), not a time target.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rows, rates, note, err := authConnectGSI(ctx, AuthConfig{Sitebox: bin, WorkDir: dir, Out: &progress}, pool)
	t.Logf("progress:\n%s", progress.String())
	if err != nil || note != "" {
		t.Fatalf("authConnectGSI: %v %s", err, note)
	}
	// Four per number of clients with xrdfs, two server-bound ones.
	if want := 4*len(gsiClients) + 2; len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r.Conns < authConnects || r.Conns < 2*r.Clients || r.PerSec <= 0 || r.ClientMS <= 0 || r.ServerMS <= 0 {
			t.Errorf("row %s: %+v", connLabel(r), r)
		}
	}
	// The box after a gsi and an anonymous login, xrootd after a gsi one.
	if len(rates) != 3 {
		t.Fatalf("%d data rates, want 3: %+v", len(rates), rates)
	}
	for _, x := range rates {
		if x.MBps <= 0 {
			t.Errorf("rate %+v", x)
		}
	}
	table := formatAuthGSI(&AuthReport{GSI: rows, GSIRates: rates})
	t.Logf("\n%s", table)
	for _, want := range []string{"| sitebox | root:// | 1 |", "| xrootd | roots:// | 16 |", "| sitebox | unix |", "| xrootd | root:// | 16 (sitebox client) |", "% connections/s"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}
