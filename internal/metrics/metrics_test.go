package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"sitebox/internal/cache"
	"sitebox/internal/director"
)

func sampleStats() cache.Stats {
	return cache.Stats{
		HitBytes: 700, RAMHitBytes: 300, MissBytes: 200, BypassBytes: 100,
		HitRequests: 7, MissRequests: 2,
		UpstreamBytes: 350, UpstreamErrors: 3, CoalescedWaits: 4,
		ReadAheadBlocks: 5, WrittenBytes: 250, EvictedBytes: 60, EvictedFiles: 1,
		WritesDropped: 2, CorruptBlocks: 1,
		UsedBytes: 190, Files: 2, OpenFiles: 1, RAMInUse: 64, RAMKept: 32, RAMLimit: 1024,
		DiskTotal: 10000, DiskFree: 4000, InodesTotal: 500, InodesFree: 450,
	}
}

func TestCacheCollectorValues(t *testing.T) {
	st := sampleStats()
	c := NewCacheCollector(func() cache.Stats { return st })
	want := `
# HELP sitebox_cache_served_bytes_total Bytes served to clients, by where they came from: hit (cache disk), miss (fetched for the request and cached) or bypass (read from upstream without caching).
# TYPE sitebox_cache_served_bytes_total counter
sitebox_cache_served_bytes_total{source="bypass"} 100
sitebox_cache_served_bytes_total{source="hit"} 700
sitebox_cache_served_bytes_total{source="miss"} 200
# HELP sitebox_cache_block_requests_total Block lookups, by result: hit (on disk) or miss (needed an upstream fetch).
# TYPE sitebox_cache_block_requests_total counter
sitebox_cache_block_requests_total{result="hit"} 7
sitebox_cache_block_requests_total{result="miss"} 2
# HELP sitebox_cache_disk_healthy 1 while the cache disk works; 0 while the cache serves uncached because of a disk error.
# TYPE sitebox_cache_disk_healthy gauge
sitebox_cache_disk_healthy 1
# HELP sitebox_cache_disk_inodes_free Free inodes on the cache filesystem.
# TYPE sitebox_cache_disk_inodes_free gauge
sitebox_cache_disk_inodes_free 450
# HELP sitebox_cache_ram_hit_bytes_total Of the hit bytes, those served from blocks kept in RAM for the stream they were fetched ahead of.
# TYPE sitebox_cache_ram_hit_bytes_total counter
sitebox_cache_ram_hit_bytes_total 300
# HELP sitebox_cache_ram_kept_bytes Bytes of blocks written to disk and kept in RAM for the stream they were fetched ahead of.
# TYPE sitebox_cache_ram_kept_bytes gauge
sitebox_cache_ram_kept_bytes 32
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"sitebox_cache_served_bytes_total", "sitebox_cache_block_requests_total",
		"sitebox_cache_disk_healthy", "sitebox_cache_disk_inodes_free",
		"sitebox_cache_ram_hit_bytes_total", "sitebox_cache_ram_kept_bytes"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c); n != 26 {
		t.Errorf("collected %d series, want 26", n)
	}

	st.DiskError = "write /cache/data: input/output error"
	if err := testutil.CollectAndCompare(c, strings.NewReader(`
# HELP sitebox_cache_disk_healthy 1 while the cache disk works; 0 while the cache serves uncached because of a disk error.
# TYPE sitebox_cache_disk_healthy gauge
sitebox_cache_disk_healthy 0
`), "sitebox_cache_disk_healthy"); err != nil {
		t.Fatal(err)
	}
}

// TestCacheCollectorLint runs Prometheus's naming rules over every series
// (counters end in _total, units in base units, help text present).
func TestCacheCollectorLint(t *testing.T) {
	c := NewCacheCollector(sampleStats)
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestRegistryHandler(t *testing.T) {
	reg := NewRegistry()
	if err := reg.Register(NewCacheCollector(sampleStats)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(reg, nil))
	t.Cleanup(srv.Close)

	tests := []struct {
		name, method, path string
		status             int
		contains           []string
	}{
		{"metrics", "GET", "/metrics", 200, []string{
			"sitebox_cache_used_bytes 190", "sitebox_cache_upstream_errors_total 3",
			"go_goroutines", "process_resident_memory_bytes",
		}},
		{"other path", "GET", "/", 404, nil},
		{"wrong method", "POST", "/metrics", 405, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			for _, s := range tt.contains {
				if !strings.Contains(string(body), s) {
					t.Errorf("body lacks %q", s)
				}
			}
		})
	}
}

// The director's reads narrowed by holdings filters, found and missed.
func TestDirectorCollectorFilteredSearches(t *testing.T) {
	c := NewDirectorCollector(func() director.Stats {
		return director.Stats{FiltersFound: 7, FiltersMissed: 2}
	})
	want := `
# HELP sitebox_director_filtered_searches_total Reads whose search the origins' holdings filters narrowed, by result: found on the servers they pointed to, or missed there (then every server was asked: files newer than their filters, or missing).
# TYPE sitebox_director_filtered_searches_total counter
sitebox_director_filtered_searches_total{result="found"} 7
sitebox_director_filtered_searches_total{result="missed"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "sitebox_director_filtered_searches_total"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}
