package bench

import (
	"fmt"
	"strings"
)

// sitesPerRegion says how many sites a region has: "10", or "4–5" when
// they do not divide evenly.
func sitesPerRegion(c DirectorScaleConfig) string {
	l := c.layout()
	lo, hi := l.sites, 0
	for r := range l.regions {
		n := len(l.sitesIn(r))
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// formatTreeLevels is the table of the tree's levels over the ad window.
func formatTreeLevels(r *DirectorScaleReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each level over the same window, from the directors' own counters (`sitebox_director_advertisements_total`, `sitebox_director_advertised_servers_total`): ads absorbed and the registry entries they set (a director's ad sets its own entry and one per server below it), against what the level below sends every %s; CPU of the level's directors together; the largest peak RSS among them at the end of the run. A level keeps up when it refuses no ad and absorbs what was sent less at most one ad per sender, and a tenth (ads near the window's ends fall in or out of it).\n\n", durText(r.Config.Interval))
	b.WriteString("| level | directors | ads/s absorbed | ads/s sent | refused | entries/s set | entries/s sent | CPU, cores | largest peak RSS |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, l := range r.Levels {
		if l.Err != "" {
			fmt.Fprintf(&b, "| %s | %d | failed: %s | | | | | | %s |\n", l.Level, l.Directors, strings.ReplaceAll(l.Err, "|", "/"), rssText(l.PeakRSS))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %d | %.0f | %.0f | %.2f | %s |\n",
			l.Level, l.Directors, l.AdsPerSec, l.AdsWanted, l.Refused, l.EntriesPerSec, l.EntriesWanted, l.Busy, rssText(l.PeakRSS))
	}
	b.WriteString("\n")
	return b.String()
}
