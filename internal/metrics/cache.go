package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"sitebox/internal/cache"
)

// NewCacheCollector reports the caching proxy's counters and gauges, named
// sitebox_cache_*, from one call to stats per scrape (pass (*cache.Cache).Stats).
func NewCacheCollector(stats func() cache.Stats) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "cache", name), help, labels, nil)
	}
	type S = cache.Stats
	f := func(n int64) float64 { return float64(n) }

	served := d("served_bytes_total", "Bytes served to clients, by where they came from: hit (cache disk), miss (fetched for the request and cached) or bypass (read from upstream without caching).", "source")
	blocks := d("block_requests_total", "Block lookups, by result: hit (on disk) or miss (needed an upstream fetch).", "result")
	labeled := func(desc *prometheus.Desc, label string, v func(*S) float64) sample[S] {
		return sample[S]{desc: desc, typ: prometheus.CounterValue, label: label, value: v}
	}
	return &snapshotCollector[S]{snap: stats, samples: []sample[S]{
		labeled(served, "hit", func(s *S) float64 { return f(s.HitBytes) }),
		labeled(served, "miss", func(s *S) float64 { return f(s.MissBytes) }),
		labeled(served, "bypass", func(s *S) float64 { return f(s.BypassBytes) }),
		labeled(blocks, "hit", func(s *S) float64 { return f(s.HitRequests) }),
		labeled(blocks, "miss", func(s *S) float64 { return f(s.MissRequests) }),

		counter(d("ram_hit_bytes_total", "Of the hit bytes, those served from blocks kept in RAM for the stream they were fetched ahead of."), func(s *S) float64 { return f(s.RAMHitBytes) }),
		counter(d("upstream_bytes_total", "Bytes read from upstreams for misses, read-ahead, prefetch and bypass."), func(s *S) float64 { return f(s.UpstreamBytes) }),
		counter(d("upstream_errors_total", "Failed upstream operations; each failover counts."), func(s *S) float64 { return f(s.UpstreamErrors) }),
		counter(d("coalesced_waits_total", "Block lookups that joined a fetch already in flight instead of starting another."), func(s *S) float64 { return f(s.CoalescedWaits) }),
		counter(d("read_ahead_blocks_total", "Blocks fetched ahead of a sequential reader or by prefetch."), func(s *S) float64 { return f(s.ReadAheadBlocks) }),
		counter(d("written_bytes_total", "Bytes written to the cache disk."), func(s *S) float64 { return f(s.WrittenBytes) }),
		counter(d("evicted_bytes_total", "Bytes removed from the cache disk by purges and evictions."), func(s *S) float64 { return f(s.EvictedBytes) }),
		counter(d("evicted_files_total", "Files removed from the cache by purges and evictions."), func(s *S) float64 { return f(s.EvictedFiles) }),
		counter(d("writes_dropped_total", "Blocks not cached because the disk fell behind."), func(s *S) float64 { return f(s.WritesDropped) }),
		counter(d("corrupt_blocks_total", "Blocks whose CRC32C did not match on disk (they are refetched)."), func(s *S) float64 { return f(s.CorruptBlocks) }),

		// Gauges never end in _total, so inode counts follow node_exporter's
		// node_filesystem_files{,_free} rather than "inodes_total".
		gauge(d("used_bytes", "Bytes of cached blocks on disk."), func(s *S) float64 { return f(s.UsedBytes) }),
		gauge(d("files", "Files in the cache."), func(s *S) float64 { return f(s.Files) }),
		gauge(d("open_files", "Cached files open by clients."), func(s *S) float64 { return f(s.OpenFiles) }),
		gauge(d("ram_in_use_bytes", "Bytes of block buffers held for fetches, write-behind and kept blocks."), func(s *S) float64 { return f(s.RAMInUse) }),
		gauge(d("ram_kept_bytes", "Bytes of blocks written to disk and kept in RAM for the stream they were fetched ahead of."), func(s *S) float64 { return f(s.RAMKept) }),
		gauge(d("ram_limit_bytes", "Limit on block buffer bytes."), func(s *S) float64 { return f(s.RAMLimit) }),
		gauge(d("disk_size_bytes", "Size of the cache filesystem."), func(s *S) float64 { return f(s.DiskTotal) }),
		gauge(d("disk_free_bytes", "Free bytes on the cache filesystem."), func(s *S) float64 { return f(s.DiskFree) }),
		gauge(d("disk_inodes", "Inodes of the cache filesystem."), func(s *S) float64 { return f(s.InodesTotal) }),
		gauge(d("disk_inodes_free", "Free inodes on the cache filesystem."), func(s *S) float64 { return f(s.InodesFree) }),
		gauge(d("disk_healthy", "1 while the cache disk works; 0 while the cache serves uncached because of a disk error."), func(s *S) float64 {
			if s.DiskError != "" {
				return 0
			}
			return 1
		}),
	}}
}
