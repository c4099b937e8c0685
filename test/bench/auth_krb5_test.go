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

// The connection-time rows run against a real KDC: every protocol row
// authenticates each connection with its protocol (authConnect checks
// the box's log) and the report shows them side by side.
func TestAuthConnectKrb5(t *testing.T) {
	for _, tool := range append(peers.KDCTools, "xrdfs", "openssl") {
		peers.Require(t, tool)
	}
	bin := siteboxBinary(t)
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	if err := makeAuthFiles(pool, 1<<20); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rows, note, err := authConnect(ctx, AuthConfig{Sitebox: bin, WorkDir: dir, Out: &progress}, pool)
	t.Logf("progress:\n%s", progress.String())
	if err != nil || note != "" {
		t.Fatalf("authConnect: %v %s", err, note)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	for _, r := range rows {
		if r.Conns != authConnects || r.PerSec <= 0 || r.ClientMS <= 0 {
			t.Errorf("row %s: %+v", connLabel(r), r)
		}
	}
	table := formatAuthConnect(&AuthReport{Connect: rows})
	t.Logf("\n%s", table)
	for _, want := range []string{"| krb5, root:// |", "| krb5, roots:// |", "| ztn, roots:// |", "% connections/s"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}
