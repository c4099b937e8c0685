package bench

import (
	"fmt"
	"strings"
)

// originPaths are the copy modes' rows per client count: the setup
// name's suffix and the row's label.
var originPaths = []struct{ suffix, label string }{
	{"", "default (pgread)"},
	{"/read", "plain read"},
	{"/streams", fmt.Sprintf("-S %d (default path)", copyStreams)},
}

// FormatOrigin renders a report as Markdown tables: sitebox against
// xrootd per client count and read path, then the vector reads, each
// with the ratio.
func FormatOrigin(rep *OriginReport) string {
	var b strings.Builder
	if len(rep.Copies) > 0 {
		b.WriteString(formatCopies(rep.Copies))
	}
	if len(rep.Readv) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(formatReadv(rep.Readv))
	}
	if b.Len() == 0 {
		return "no results\n"
	}
	return b.String()
}

func formatCopies(rs []OriginResult) string {
	get := func(server string, n int) (OriginResult, bool) {
		for _, r := range rs {
			if r.Server == server && r.Clients == n {
				return r, true
			}
		}
		return OriginResult{}, false
	}
	var ns []int
	for _, r := range rs {
		if strings.HasPrefix(r.Server, "sitebox") && (len(ns) == 0 || ns[len(ns)-1] != r.Clients) {
			ns = append(ns, r.Clients)
		}
	}
	out := "| clients | xrdcp read path | sitebox MB/s | xrootd MB/s | sitebox ÷ xrootd |\n|---:|---|---:|---:|---:|\n"
	var peak [2]float64
	for _, n := range ns {
		for _, path := range originPaths {
			s, okS := get("sitebox"+path.suffix, n)
			x, okX := get("xrootd"+path.suffix, n)
			if !okS || !okX {
				continue
			}
			peak = [2]float64{max(peak[0], s.RSSMiB), max(peak[1], x.RSSMiB)}
			out += fmt.Sprintf("| %d | %s | %.0f | %.0f | %s |\n", n, path.label, s.MBps, x.MBps, ratio(s.MBps, x.MBps))
		}
	}
	out += fmt.Sprintf("\nPeak server RSS over the run: sitebox %.0f MiB, xrootd %.0f MiB.\n", peak[0], peak[1])
	return out
}

func formatReadv(rs []ReadvResult) string {
	var s, x ReadvResult
	for _, r := range rs {
		switch r.Server {
		case "sitebox":
			s = r
		case "xrootd":
			x = r
		}
	}
	return fmt.Sprintf("Vector reads (%d threads × %d × %d KiB at random offsets of %d files of %d MiB on local disk):\n\n"+
		"| | sitebox | xrootd | sitebox ÷ xrootd |\n|---|---:|---:|---:|\n"+
		"| readv/s | %.0f | %.0f | %s |\n"+
		"| server CPU per readv | %.0f µs | %.0f µs | %s |\n",
		readvThreads, readvChunks, readvChunkSize>>10, readvFiles, readvFileSize>>20,
		s.Rate, x.Rate, ratio(s.Rate, x.Rate),
		micros(s.CPUPerReadv), micros(x.CPUPerReadv), ratio(micros(s.CPUPerReadv), micros(x.CPUPerReadv)))
}
