package cache

import (
	"context"
	"time"
)

// flusher saves changed block maps every few seconds, so a crash loses at
// most that much of what was cached (never correctness: a block counts as
// present only after its data was synced), and the last access of files
// closed since (Cache.touched).
func (c *Cache) flusher(ctx context.Context) {
	defer c.bg.Done()
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, e := range c.withData.snapshot() {
			e.mu.Lock()
			dirty := e.dirty && e.data.Opened() != nil
			e.mu.Unlock()
			if dirty {
				e.flush()
			}
		}
		c.saveTouched()
	}
}

// saveTouched saves the maps whose only change is the last access.
func (c *Cache) saveTouched() {
	for _, e := range c.touched.snapshot() {
		c.touched.remove(e) // before: a close meanwhile adds it back
		e.flush()
	}
}

// purgeEvery is how many bytes may be written between usage checks, so a
// fast fill is checked before it overshoots the high mark by much.
const purgeEvery = 256 << 20

func (c *Cache) kickPurge(written int64) {
	if written >= 0 && c.writtenSinceCheck.Add(written) < purgeEvery {
		return
	}
	select {
	case c.purgeCh <- struct{}{}:
	default:
	}
}

func (c *Cache) purger(ctx context.Context) {
	defer c.bg.Done()
	t := time.NewTicker(c.cfg.PurgeInterval.D())
	defer t.Stop()
	for {
		c.writtenSinceCheck.Store(0)
		c.purgeOnce()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.purgeCh:
		}
	}
}

// usage is what the watermarks are compared with.
type usage struct {
	bytes, files           int64 // the cache's own
	fsTotal, fsUsed        int64
	inodesTotal, inodesUse int64
}

func (c *Cache) usage() usage {
	var u usage
	c.mu.Lock()
	u.bytes, u.files = c.idx.Bytes(), int64(c.idx.Len())
	c.mu.Unlock()
	for _, e := range c.liveEntries() {
		e.mu.Lock()
		if e.m != nil && e.m.Count() > 0 {
			u.bytes += e.m.CachedBytes()
			u.files++
		}
		e.mu.Unlock()
	}
	total, free, inodes, freeInodes, err := c.disk.Statfs()
	if err == nil {
		u.fsTotal, u.fsUsed = total, total-free
		u.inodesTotal, u.inodesUse = inodes, inodes-freeInodes
	}
	return u
}

// excess returns how much must go to get under low, once usage is above
// high (0 otherwise). A fraction mark is of the filesystem, an absolute
// one of the cache's own usage.
func excess(high, low float64, own, fsUsed, fsTotal int64) int64 {
	used, hi, lo := own, high, low
	if high <= 1 {
		used = fsUsed
		hi, lo = high*float64(fsTotal), low*float64(fsTotal)
	}
	if float64(used) <= hi {
		return 0
	}
	return used - int64(lo)
}

// purgeOnce evicts least recently used files that nobody has open until
// both bytes and files are under their low marks. A pass that falls short
// (files in use at that moment) leaves the cache between the marks; the
// next passes then aim for the low mark without waiting for the high one
// to be crossed again.
func (c *Cache) purgeOnce() {
	c.purgeMu.Lock()
	defer c.purgeMu.Unlock()
	start := time.Now()
	w := c.cfg.Watermarks
	u := c.usage()
	bytesHigh, filesHigh := float64(w.HighWater), float64(w.FilesHighWater)
	if c.purgeShort {
		bytesHigh, filesHigh = float64(w.LowWater), float64(w.FilesLowWater)
	}
	needBytes := excess(bytesHigh, float64(w.LowWater), u.bytes, u.fsUsed, u.fsTotal)
	// Each cached file costs two inodes (data and block map).
	needFiles := excess(filesHigh, float64(w.FilesLowWater), u.files, u.inodesUse, u.inodesTotal)
	if fraction(float64(w.FilesHighWater)) {
		needFiles = (needFiles + 1) / 2
	}
	if needBytes <= 0 && needFiles <= 0 {
		c.purgeShort = false
		return
	}
	freedBytes, freedFiles, skipped := c.evictOldest(needBytes, needFiles)
	short := freedBytes < needBytes || freedFiles < needFiles
	if freedFiles > 0 || !c.purgeShort {
		c.log.Info("cache purge", "freed_bytes", freedBytes, "freed_files", freedFiles, "skipped_open", skipped,
			"needed_bytes", max(needBytes, 0), "needed_files", max(needFiles, 0), "took", time.Since(start).Round(time.Microsecond))
	}
	if short && !c.purgeShort {
		c.log.Warn("cache purge could not reach the low watermark (files in use, or other data on the cache filesystem); retrying every check")
	}
	c.purgeShort = short
}

// SetWatermarks changes the space watermarks of a running cache (a reload
// of the box's config, which has checked them); the purge interval
// stays. The next purge pass follows them.
func (c *Cache) SetWatermarks(w Watermarks) {
	c.purgeMu.Lock()
	defer c.purgeMu.Unlock()
	c.cfg.Watermarks = w // the purge interval is left alone: Run read it once
	c.purgeShort = false
}
