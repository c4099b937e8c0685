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

// TestCacheBenchEndToEnd runs a tiny scale test: direct and XCache, plus
// the sitebox cache when SITEBOX_BIN names a binary (scripts/test.sh sets
// it), and checks the figures are sane and the charts are PNGs.
func TestCacheBenchEndToEnd(t *testing.T) {
	peers.Require(t, "xrootd")
	peers.Require(t, "xrdcp")
	peers.RequireToxiproxy(t)
	setups := []string{"direct", "xcache"}
	sitebox := os.Getenv("SITEBOX_BIN")
	if sitebox != "" {
		setups = []string{"direct", "sitebox", "xcache"}
	}
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rep, err := Cache(ctx, CacheConfig{
		Sitebox: sitebox, WorkDir: t.TempDir(),
		Files: 6, FileSize: 4 << 20, Clients: []int{2}, Setups: setups,
		Latency: 2 * time.Millisecond, Bandwidth: 100_000_000,
		ColdMax: 10 * time.Second, Warm: 2 * time.Second, Bin: 250 * time.Millisecond,
		Out: &progress,
	})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	table := FormatCache(rep)
	t.Logf("\n%s", table)
	if len(rep.Points) != len(setups) {
		t.Fatalf("%d points, want %d", len(rep.Points), len(setups))
	}
	for _, p := range rep.Points {
		t.Run(p.Setup, func(t *testing.T) {
			if p.Err != "" {
				t.Fatal(p.Err)
			}
			if p.Failed > 0 {
				t.Errorf("%d copies failed: %s", p.Failed, p.FirstError)
			}
			if p.FilesCold != 6 || p.Unique != 6*4<<20 {
				t.Errorf("cold phase read %d files (%d unique bytes), want all 6", p.FilesCold, p.Unique)
			}
			if p.Cold.MBps <= 0 || p.Warm.MBps <= 0 || len(p.Series) == 0 {
				t.Errorf("throughput cold %.1f warm %.1f MB/s, %d samples", p.Cold.MBps, p.Warm.MBps, len(p.Series))
			}
			if !strings.Contains(table, "| "+p.Setup+" | 2 |") {
				t.Errorf("table has no row for %s", p.Setup)
			}
			switch p.Setup {
			case "direct":
				// No cache: every copy crosses the link.
				if p.UpstreamPerUnique < 1 || p.HitRatio > 0.01 {
					t.Errorf("direct: upstream ÷ unique %.3f, hit ratio %.3f", p.UpstreamPerUnique, p.HitRatio)
				}
			case "sitebox":
				// Our cache promises each byte crosses the WAN once.
				if p.UpstreamPerUnique < 0.99 || p.UpstreamPerUnique > 1.02 {
					t.Errorf("sitebox: upstream ÷ unique %.3f, want ≈ 1 (each byte fetched once)", p.UpstreamPerUnique)
				}
				if p.WarmHitRatio < 0.98 {
					t.Errorf("sitebox: warm-phase hit ratio %.3f, want ≈ 1", p.WarmHitRatio)
				}
			default:
				// The peer's figures are what the benchmark reports, not what
				// this test asserts: XCache now and then fetches a file a
				// second time (seen: 1.168 with one 4 MiB file twice, warm hit
				// ratio 0.977). Checked here only that the counters were
				// wired: every byte crossed once, and most warm reads hit.
				if p.UpstreamPerUnique < 0.99 || p.UpstreamPerUnique > 2 {
					t.Errorf("%s: upstream ÷ unique %.3f, want between 1 and 2", p.Setup, p.UpstreamPerUnique)
				}
				if p.WarmHitRatio < 0.5 {
					t.Errorf("%s: warm-phase hit ratio %.3f, want most warm reads served from the cache", p.Setup, p.WarmHitRatio)
				}
			}
			if p.Setup != "direct" && p.PeakRSS <= 0 {
				t.Errorf("%s: no RSS measured", p.Setup)
			}
		})
	}
	files, err := CacheCharts(rep, t.TempDir())
	if err != nil || len(files) != 1 {
		t.Fatalf("charts %v: %v", files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s is not a PNG (%v)", files[0], err)
	}
}
