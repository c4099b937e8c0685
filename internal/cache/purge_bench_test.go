package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/cache/index"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// BenchmarkPurgeRound times one purge round evicting 100 files, and one
// `cache ls` page of 1000, from caches of 10^4 to 10^6 idle files: both
// should cost the same whatever the total.
func BenchmarkPurgeRound(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			c, err := New(Config{
				Settings: Settings{Dir: dir, BlockSize: 1 << 20, RAM: 64 << 20,
					Watermarks:    Watermarks{HighWater: 1 << 50, LowWater: 1 << 49, FilesHighWater: FileLevel(n - 950), FilesLowWater: FileLevel(n - 1000)},
					PurgeInterval: units.Duration(time.Hour)},
				Routes: []Route{{Prefix: "/store", Upstreams: []Upstream{{Name: "none", Streams: []store.Store{nil}}}}},
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			name := func(i int) string { return fmt.Sprintf("/store/d%03d/f%07d", i%1000, i) }
			add := func(i int) {
				c.idx.Add(&index.Record{Path: name(i), Size: 4096, Cached: 4096, Present: 1, ATime: int64(i)})
			}
			// The evicted files exist on disk; the rest are records only.
			refill := func(from, to int) {
				for i := from; i < to; i++ {
					for _, sub := range []string{"data", "meta"} {
						p := filepath.Join(dir, sub, name(i))
						os.MkdirAll(filepath.Dir(p), 0o755)
						os.WriteFile(p, []byte("x"), 0o644)
					}
					add(i)
				}
			}
			for i := 1000; i < n; i++ {
				add(i)
			}
			var purge, ls time.Duration
			for i := range b.N {
				b.StopTimer()
				lo := -1000 * (i + 1) // older than every record, then removed
				refill(lo, lo+100)
				b.StartTimer()
				t0 := time.Now()
				c.purgeOnce()
				purge += time.Since(t0)
				t0 = time.Now()
				page, _ := c.EntriesPage("/store", name(n/2), 1000)
				ls += time.Since(t0)
				b.StopTimer()
				if len(page) != 1000 {
					b.Fatalf("page of %d", len(page))
				}
				if c.idx.Len() != n-1000 {
					b.Fatalf("%d records after the purge, want %d", c.idx.Len(), n-1000)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(purge.Microseconds())/float64(b.N), "µs/purge")
			b.ReportMetric(float64(ls.Microseconds())/float64(b.N), "µs/ls-page")
		})
	}
}
