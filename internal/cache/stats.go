package cache

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of the cache's counters and gauges, for metrics, the
// dashboard and `sitebox cache stats`. Counters only grow while the process
// runs; gauges are current values.
type Stats struct {
	// Bytes and block requests served to clients.
	HitBytes      int64 `json:"hit_bytes"`      // from cache disk (or RAM, below)
	RAMHitBytes   int64 `json:"ram_hit_bytes"`  // of HitBytes, from blocks kept in RAM for the stream they were fetched ahead of
	MissBytes     int64 `json:"miss_bytes"`     // fetched from upstream for the request (and cached)
	BypassBytes   int64 `json:"bypass_bytes"`   // read from upstream without caching (RAM budget full, disk error)
	HitRequests   int64 `json:"hit_requests"`   // block lookups answered from disk
	MissRequests  int64 `json:"miss_requests"`  // block lookups that needed an upstream fetch
	UpstreamBytes int64 `json:"upstream_bytes"` // all bytes read from upstreams (misses, read-ahead, prefetch, bypass)
	// CoalescedWaits counts block lookups that joined a fetch already in
	// flight instead of starting another.
	CoalescedWaits  int64 `json:"coalesced_waits"`
	ReadAheadBlocks int64 `json:"read_ahead_blocks"` // fetches ahead of a sequential reader or by prefetch
	WrittenBytes    int64 `json:"written_bytes"`     // bytes written to the cache disk
	EvictedBytes    int64 `json:"evicted_bytes"`     // bytes removed by purges and evictions
	EvictedFiles    int64 `json:"evicted_files"`
	WritesDropped   int64 `json:"writes_dropped"`  // blocks not cached because the disk fell behind
	CorruptBlocks   int64 `json:"corrupt_blocks"`  // reads of cached pages whose CRC32C did not match (refetched)
	UpstreamErrors  int64 `json:"upstream_errors"` // failed upstream operations (each failover counts)

	// Gauges.
	UsedBytes   int64 `json:"used_bytes"` // bytes of cached blocks on disk
	Files       int64 `json:"files"`      // files in the cache
	OpenFiles   int64 `json:"open_files"` // cached files open by clients
	RAMInUse    int64 `json:"ram_in_use"` // bytes of block buffers held (fetches, write-behind, kept blocks)
	RAMKept     int64 `json:"ram_kept"`   // of RAMInUse, blocks written and kept for their reader
	RAMLimit    int64 `json:"ram_limit"`
	DiskTotal   int64 `json:"disk_total"` // the cache filesystem's size
	DiskFree    int64 `json:"disk_free"`
	InodesTotal int64 `json:"inodes_total"`
	InodesFree  int64 `json:"inodes_free"`
	// DiskError is the last disk error while the cache is serving
	// uncached because of it; empty when the disk is healthy.
	DiskError string `json:"disk_error"`
}

// EntryInfo describes one cached file, for `sitebox cache ls`.
type EntryInfo struct {
	Path        string    `json:"path"`
	Size        int64     `json:"size"`         // the upstream file's size
	CachedBytes int64     `json:"cached_bytes"` // bytes of its blocks on disk
	Blocks      int       `json:"blocks"`
	Present     int       `json:"present"` // blocks with data on disk (whole, or some of their pages)
	ModTime     time.Time `json:"mtime"`   // the upstream file's mtime
	LastAccess  time.Time `json:"last_access"`
	Open        int       `json:"open"` // client handles open now
}

// counters are the atomically updated parts of Stats.
type counters struct {
	hitBytes, missBytes, bypassBytes atomic.Int64
	ramHitBytes                      atomic.Int64
	hitRequests, missRequests        atomic.Int64
	coalescedWaits                   atomic.Int64
	readAheadBlocks                  atomic.Int64
	writtenBytes, evictedBytes       atomic.Int64
	evictedFiles, writesDropped      atomic.Int64
	corruptBlocks                    atomic.Int64
}

// servedFromFetch counts n bytes served from a fetch's buffer: a hit
// from RAM when the fetch was kept after its write, else a miss.
func (c *counters) servedFromFetch(kept bool, n int64) {
	if kept {
		c.hitBytes.Add(n)
		c.ramHitBytes.Add(n)
		return
	}
	c.missBytes.Add(n)
}

func (c *counters) snapshot(s *Stats) {
	s.HitBytes = c.hitBytes.Load()
	s.RAMHitBytes = c.ramHitBytes.Load()
	s.MissBytes = c.missBytes.Load()
	s.BypassBytes = c.bypassBytes.Load()
	s.HitRequests = c.hitRequests.Load()
	s.MissRequests = c.missRequests.Load()
	s.CoalescedWaits = c.coalescedWaits.Load()
	s.ReadAheadBlocks = c.readAheadBlocks.Load()
	s.WrittenBytes = c.writtenBytes.Load()
	s.EvictedBytes = c.evictedBytes.Load()
	s.EvictedFiles = c.evictedFiles.Load()
	s.WritesDropped = c.writesDropped.Load()
	s.CorruptBlocks = c.corruptBlocks.Load()
}

// Stats returns the counters and current usage.
func (c *Cache) Stats() Stats {
	var s Stats
	c.ctr.snapshot(&s)
	s.UpstreamBytes, s.UpstreamErrors = c.ups.Bytes(), c.ups.Errors()
	u := c.usage()
	s.UsedBytes, s.Files = u.bytes, u.files
	c.mu.Lock()
	for _, e := range c.entries {
		if e.opens > 0 {
			s.OpenFiles++
		}
	}
	c.mu.Unlock()
	s.RAMInUse, s.RAMLimit, s.RAMKept = c.budget.inUse(), c.cfg.RAM.Bytes(), c.keep.held()
	s.DiskTotal, s.DiskFree = u.fsTotal, u.fsTotal-u.fsUsed
	s.InodesTotal, s.InodesFree = u.inodesTotal, u.inodesTotal-u.inodesUse
	s.DiskError = c.disk.ErrorText()
	return s
}
