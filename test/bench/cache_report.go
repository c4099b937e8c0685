package bench

import (
	"fmt"
	"sitebox/internal/sitebench"
	"strings"
	"time"
)

// Targets for the sitebox cache, from the issue.
const (
	targetColdVsDirect   = 0.9  // cold-phase throughput ÷ direct
	targetWarmVsXcache   = 1.0  // warm-phase throughput ÷ XCache's
	targetUpstreamUnique = 1.01 // upstream bytes ÷ unique bytes
)

// find returns the point for setup at n clients, if it ran.
func (r *CacheReport) find(setup string, n int) (CachePoint, bool) {
	for _, p := range r.Points {
		if p.Setup == setup && p.Clients == n && p.Err == "" {
			return p, true
		}
	}
	return CachePoint{}, false
}

// FormatCache renders the report as Markdown: the conditions, one row per
// setup and client count, the sitebox targets, and any errors.
func FormatCache(r *CacheReport) string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "Files: %d × %s (%s). Upstream link: %s added each way (round trip +%s), %s per TCP connection (Toxiproxy).\n",
		c.Files, sitebench.MB(c.FileSize), sitebench.MB(int64(c.Files)*c.FileSize), durText(c.Latency), durText(2*c.Latency), rateText(c.Bandwidth))
	b.WriteString(congestionNote(r.Congestion))
	fmt.Fprintf(&b, "Caches: empty at every point, RAM %s, disk watermarks %s high / %s low; XCache pfc.blocksize %s, pfc.prefetch %s.\n",
		sitebench.MiB(c.RAM), sitebench.MB(c.Disk), sitebench.MB(c.Disk*8/10), orDefault(c.XcacheBlockSize > 0, sitebench.MiB(c.XcacheBlockSize)), orDefault(c.XcachePrefetch != 0, fmt.Sprint(max(c.XcachePrefetch, 0))))
	fmt.Fprintf(&b, "Cold phase: clients share a queue of every file once (no copy starts after %s). Warm phase: %s of random files among those read.\n\n",
		durText(c.ColdMax), durText(c.Warm))

	b.WriteString("| setup | clients | cold MB/s | cold ÷ direct | files cold | warm MB/s | warm ÷ xcache | hit ratio (all / warm) | upstream ÷ unique | peak RSS | CPU s/GB (cold / warm) | copies (failed) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var errs []string
	for _, p := range r.Points {
		if p.Err != "" {
			fmt.Fprintf(&b, "| %s | %d | failed | | | | | | | | | |\n", p.Setup, p.Clients)
			errs = append(errs, fmt.Sprintf("%s, %d clients: %s", p.Setup, p.Clients, p.Err))
			continue
		}
		vsDirect, vsX := "", ""
		if d, ok := r.find("direct", p.Clients); ok && p.Setup != "direct" {
			vsDirect = ratio(p.Cold.MBps, d.Cold.MBps)
		}
		if x, ok := r.find("xcache", p.Clients); ok && p.Setup != "xcache" && p.Setup != "direct" {
			vsX = ratio(p.Warm.MBps, x.Warm.MBps)
		}
		hit := fmt.Sprintf("%.3f / %.3f", p.HitRatio, p.WarmHitRatio)
		if p.HitSource == "cache" {
			hit += " (cache's own)"
		}
		cpu := ""
		if p.CPUPerGBCold > 0 || p.CPUPerGBWarm > 0 {
			cpu = fmt.Sprintf("%.2f / %.2f", p.CPUPerGBCold, p.CPUPerGBWarm)
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %s | %d | %.1f | %s | %s | %.3f | %s | %s | %d (%d) |\n",
			p.Setup, p.Clients, p.Cold.MBps, vsDirect, p.FilesCold, p.Warm.MBps, vsX, hit,
			p.UpstreamPerUnique, rssText(p.PeakRSS), cpu, p.Copies, p.Failed)
		if p.FirstError != "" {
			errs = append(errs, fmt.Sprintf("%s, %d clients: %d copies failed, first: %s", p.Setup, p.Clients, p.Failed, p.FirstError))
		}
	}
	b.WriteString(formatTargets(r))
	if len(errs) > 0 {
		b.WriteString("\nErrors:\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(e, "\n", " ¶ "))
		}
	}
	return b.String()
}

// formatTargets checks the sitebox points against the targets.
func formatTargets(r *CacheReport) string {
	var b strings.Builder
	for _, n := range r.Config.Clients {
		s, ok := r.find("sitebox", n)
		if !ok {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\nTargets for the sitebox cache: cold ≥ %.1f× direct, warm ≥ %.1f× XCache, upstream ÷ unique ≤ %.2f.\n\n",
				targetColdVsDirect, targetWarmVsXcache, targetUpstreamUnique)
			b.WriteString("| clients | cold ÷ direct | warm ÷ xcache | upstream ÷ unique |\n|---:|---:|---:|---:|\n")
		}
		cold, warm := "n/a", "n/a"
		if d, ok := r.find("direct", n); ok && d.Cold.MBps > 0 {
			cold = verdict(s.Cold.MBps/d.Cold.MBps, targetColdVsDirect, true, "%.2f×")
		}
		if x, ok := r.find("xcache", n); ok && x.Warm.MBps > 0 {
			warm = verdict(s.Warm.MBps/x.Warm.MBps, targetWarmVsXcache, true, "%.2f×")
		}
		up := verdict(s.UpstreamPerUnique, targetUpstreamUnique, false, "%.3f")
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", n, cold, warm, up)
	}
	return b.String()
}

func verdict(v, target float64, atLeast bool, format string) string {
	ok := v >= target
	if !atLeast {
		ok = v <= target
	}
	mark := "✗"
	if ok {
		mark = "✓"
	}
	return fmt.Sprintf(format+" %s", v, mark)
}

func ratio(a, b float64) string {
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func rssText(n int64) string {
	if n <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func rateText(bps int64) string {
	if bps <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%g MB/s", float64(bps)/1e6)
}

func durText(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	return d.String()
}

func orDefault(set bool, v string) string {
	if set {
		return v
	}
	return "default"
}
