package bench

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestCacheAnalysisEndToEnd runs a tiny analysis mode: direct, XCache and,
// when SITEBOX_BIN names a binary, the sitebox cache and a local sitebox
// origin, with their warm passes taking turns; it checks every setup read
// what was asked and the figures are sane.
func TestCacheAnalysisEndToEnd(t *testing.T) {
	peers.Require(t, "xrootd")
	peers.RequireToxiproxy(t)
	py := os.Getenv("SITEBOX_PYTHON")
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SITEBOX_PYTHON is not set: the analysis mode reads with the XRootD Python bindings")
		}
		t.Skip("SITEBOX_PYTHON is not set")
	}
	setups := []string{"direct", "xcache"}
	sitebox := os.Getenv("SITEBOX_BIN")
	if sitebox != "" {
		setups = []string{"direct", "sitebox", "xcache", "local"}
	}
	// With two CPUs or more the readers get one of their own, as the
	// default does on bigger machines: each pass checks where it ran.
	readerCPUs := "none"
	if cpus, err := availableCPUs(); err == nil && len(cpus) >= 2 {
		readerCPUs = strconv.Itoa(cpus[len(cpus)-1])
	}
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const threads, readvs, chunks, chunk = 2, 10, 4, 32 << 10
	const files, fileSize = 2, 4 << 20
	rep, err := CacheAnalysis(ctx, AnalysisConfig{
		CacheConfig: CacheConfig{
			Sitebox: sitebox, WorkDir: t.TempDir(), Setups: setups,
			Files: files, FileSize: fileSize, Latency: 2 * time.Millisecond, Bandwidth: 100_000_000,
			Out: &progress,
		},
		Python: py, Threads: threads, Readvs: readvs, Chunks: chunks, ChunkSize: chunk, WarmPasses: 3, ColdPasses: 2,
		ReaderCPUs: readerCPUs,
	})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if want := "CPUs: readers on " + readerCPUs + ";"; readerCPUs != "none" && !strings.HasPrefix(rep.CPUs, want) {
		t.Errorf("the report says %q, want it to begin %q", rep.CPUs, want)
	}
	if len(rep.Points) != len(setups) {
		t.Fatalf("%d points, want %d", len(rep.Points), len(setups))
	}
	for i, p := range rep.Points {
		t.Run(p.Setup, func(t *testing.T) {
			if p.Setup != setups[i] {
				t.Fatalf("point %d is %s, want %s", i, p.Setup, setups[i])
			}
			if p.Err != "" {
				t.Fatal(p.Err)
			}
			if p.AskedBytes != threads*readvs*chunks*chunk {
				t.Errorf("asked %d bytes cold, want %d", p.AskedBytes, threads*readvs*chunks*chunk)
			}
			if p.Warm <= 0 || p.WarmSecs <= 0 {
				t.Errorf("warm %.1f readv/s over %.3f s", p.Warm, p.WarmSecs)
			}
			if p.WarmMin > p.Warm || p.Warm > p.WarmMax {
				t.Errorf("warm median %.1f outside its passes' %.1f–%.1f", p.Warm, p.WarmMin, p.WarmMax)
			}
			if p.Setup != "local" && (p.ColdMin <= 0 || p.ColdMin > p.Cold || p.Cold > p.ColdMax) {
				t.Errorf("cold median %.1f outside its passes' %.1f–%.1f", p.Cold, p.ColdMin, p.ColdMax)
			}
			switch p.Setup {
			case "local":
				if p.Cold != 0 || p.UpstreamBytes != 0 {
					t.Errorf("local origin: cold %.1f, upstream %d; it has no link", p.Cold, p.UpstreamBytes)
				}
			case "direct":
				if p.Cold <= 0 || p.UpstreamBytes < p.AskedBytes {
					t.Errorf("direct: cold %.1f readv/s, upstream %d bytes for %d asked", p.Cold, p.UpstreamBytes, p.AskedBytes)
				}
			case "sitebox":
				// The reads cover a third of these small files, so the
				// pages and coalesced spans fetched add up to more than
				// twice what was asked (the benchmark's default reads are
				// sparse); but no byte crosses the link twice.
				if p.Cold <= 0 || p.UpstreamBytes <= 0 || p.UpstreamBytes > files*fileSize*21/20 {
					t.Errorf("sitebox: cold %.1f readv/s, upstream %d bytes for files of %d bytes in all", p.Cold, p.UpstreamBytes, files*fileSize)
				}
				if p.PeakRSS <= 0 {
					t.Error("sitebox: no RSS measured")
				}
			default:
				if p.Cold <= 0 || p.UpstreamBytes <= 0 {
					t.Errorf("%s: cold %.1f readv/s, upstream %d bytes", p.Setup, p.Cold, p.UpstreamBytes)
				}
			}
		})
	}
}
