package bench

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// unit is what a pass's rate counts.
func (c *AnalysisConfig) unit() string {
	if c.uproot() {
		return "jobs/s"
	}
	return "readv/s"
}

func bytesRatio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// FormatAnalysis renders the report as a table, with each setup's rates
// relative to direct (cold) and to XCache (warm).
func FormatAnalysis(rep *AnalysisReport) string {
	var b strings.Builder
	c := rep.Config
	if c.uproot() {
		fmt.Fprintf(&b, "analysis (uproot): %d threads × %d jobs, each reading %d of %d branches (%d entries) of one of %d ROOT files; link %v each way, %d B/s per connection\n",
			c.Threads, c.Jobs, c.ReadBranches, c.Branches, c.Entries, c.Files, c.Latency, c.Bandwidth)
	} else {
		fmt.Fprintf(&b, "analysis: %d threads × %d vector reads of %d × %d B over %d files of %d B; link %v each way, %d B/s per connection\n",
			c.Threads, c.Readvs, c.Chunks, c.ChunkSize, c.Files, c.FileSize, c.Latency, c.Bandwidth)
	}
	b.WriteString(congestionNote(rep.Congestion))
	if rep.CPUs != "" {
		b.WriteString(rep.CPUs + "\n")
	}
	base := map[string]AnalysisPoint{}
	for _, p := range rep.Points {
		base[p.Setup] = p
	}
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "setup\tcold %s\twarm %s\tcold ÷ direct\twarm ÷ xcache\tupstream ÷ asked\tpeak RSS\t\n", c.unit(), c.unit())
	for _, p := range rep.Points {
		if p.Err != "" {
			fmt.Fprintf(w, "%s\tfailed: %s\t\t\t\t\t\t\n", p.Setup, firstLine(p.Err))
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t\n", p.Setup, orDash(p.Cold, "%.1f"), p.Warm,
			orDash(ratioF(p.Cold, base["direct"].Cold), "%.2f"), orDash(ratioF(p.Warm, base["xcache"].Warm), "%.2f"),
			orDash(bytesRatio(p.UpstreamBytes, p.AskedBytes), "%.2f"), rssText(p.PeakRSS))
	}
	w.Flush()
	return b.String()
}

func ratioF(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func orDash(v float64, format string) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
