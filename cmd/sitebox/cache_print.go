package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"sitebox/internal/admin"
	"sitebox/internal/cache"
	"sitebox/internal/units"
)

// printEntries writes `cache ls` as a table with a totals line.
func printEntries(w io.Writer, es []cache.EntryInfo, prefix string) {
	if len(es) == 0 {
		if prefix != "" {
			fmt.Fprintf(w, "nothing cached at or below %s\n", prefix)
		} else {
			fmt.Fprintln(w, "nothing cached")
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tSIZE\tCACHED\t%\tLAST ACCESS\tOPEN")
	var size, cached int64
	for _, e := range es {
		size += e.Size
		cached += e.CachedBytes
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", e.Path, units.FormatSize(e.Size),
			units.FormatSize(e.CachedBytes), percent(e.CachedBytes, e.Size), when(e.LastAccess), e.Open)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s, %s cached of %s (%s)\n", plural(len(es), "file"),
		units.FormatSize(cached), units.FormatSize(size), percent(cached, size))
}

// printStats writes `cache stats` as aligned "what: value" lines.
func printStats(w io.Writer, s cache.Stats) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	line := func(k, f string, a ...any) { fmt.Fprintf(tw, "%s:\t"+f+"\n", append([]any{k}, a...)...) }
	served := s.HitBytes + s.MissBytes + s.BypassBytes
	line("Served", "%s (hit %s, %s of it from RAM; miss %s, bypass %s)", units.FormatSize(served),
		units.FormatSize(s.HitBytes), units.FormatSize(s.RAMHitBytes), units.FormatSize(s.MissBytes), units.FormatSize(s.BypassBytes))
	line("Hit ratio", "%s of bytes, %s of block lookups (%d hit, %d miss)",
		ratio(s.HitBytes, served), ratio(s.HitRequests, s.HitRequests+s.MissRequests), s.HitRequests, s.MissRequests)
	line("Upstream", "%s read, %s", units.FormatSize(s.UpstreamBytes), plural(int(s.UpstreamErrors), "error"))
	line("Coalesced", "%s joined a fetch in flight", plural(int(s.CoalescedWaits), "lookup"))
	line("Read-ahead", "%s", plural(int(s.ReadAheadBlocks), "block"))
	line("Written", "%s; %s dropped (disk behind); %s refetched", units.FormatSize(s.WrittenBytes),
		plural(int(s.WritesDropped), "block"), plural(int(s.CorruptBlocks), "corrupt block"))
	line("Evicted", "%s, %s", plural(int(s.EvictedFiles), "file"), units.FormatSize(s.EvictedBytes))
	line("Cached", "%s in %s (%d open)", units.FormatSize(s.UsedBytes), plural(int(s.Files), "file"), s.OpenFiles)
	line("RAM", "%s in use of %s (%s kept for their readers)", units.FormatSize(s.RAMInUse), units.FormatSize(s.RAMLimit), units.FormatSize(s.RAMKept))
	line("Disk", "%s free of %s (%s used); %d of %d inodes free", units.FormatSize(s.DiskFree),
		units.FormatSize(s.DiskTotal), ratio(s.DiskTotal-s.DiskFree, s.DiskTotal), s.InodesFree, s.InodesTotal)
	if s.DiskError != "" {
		line("Disk health", "FAILING, serving uncached: %s", s.DiskError)
	} else {
		line("Disk health", "ok")
	}
	tw.Flush()
}

// printEvicted writes what `cache evict` removed.
func printEvicted(w io.Writer, r admin.EvictResult) {
	if len(r.Files) == 0 {
		fmt.Fprintf(w, "evicted %s\n", r.Path)
		return
	}
	fmt.Fprintf(w, "evicted %s: %s, %s freed\n", r.Path, plural(len(r.Files), "file"), units.FormatSize(r.Bytes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range r.Files {
		fmt.Fprintf(tw, "  %s\t%s\n", e.Path, units.FormatSize(e.CachedBytes))
	}
	tw.Flush()
}

// percent is part of whole, rounded down so that a file one block short
// never shows as 100%.
func percent(part, whole int64) string {
	switch {
	case whole <= 0:
		return "-"
	case part >= whole:
		return "100%"
	}
	return fmt.Sprintf("%d%%", part*100/whole)
}

// ratio is part of whole with one decimal, "-" before anything happened.
func ratio(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(part)*100/float64(whole))
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
