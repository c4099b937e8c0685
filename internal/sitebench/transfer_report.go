package sitebench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"sitebox/internal/transfer"
)

// FormatTransfer renders the report as Markdown: the conditions, one row
// per client count, and the first error of any count that had errors.
func FormatTransfer(r *TransferReport) string {
	c := r.Config
	var b strings.Builder
	b.WriteString("## Transfer: " + strings.Join(c.URLs, ", ") + "\n\n")
	fmt.Fprintf(&b, "%d files (%s) picked at random by each client and read to /dev/null with sitebox's client "+
		"(%s ranged reads, %d in flight, as `sitebox get`), each client with its own connections; %v per client count.\n\n",
		r.Files, MB(r.Bytes), MiB(transfer.ChunkSize), transfer.Parallel, c.Duration)
	b.WriteString("MB/s = 10⁶ B/s of reads completed in the window; p10/p90 of the per-second aggregate samples.\n\n")
	b.WriteString("| clients | MB/s mean | p10 | p90 | files copied | errors |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|\n")
	var errs []string
	for _, p := range r.Points {
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %d | %d |\n", p.Clients, p.MBps, p.P10, p.P90, p.Files, p.Errors)
		if p.Errors > 0 {
			errs = append(errs, fmt.Sprintf("- %d clients, first of %d: %s", p.Clients, p.Errors, p.FirstError))
		}
	}
	if len(errs) > 0 {
		b.WriteString("\nErrors:\n" + strings.Join(errs, "\n") + "\n")
	}
	return b.String()
}

// TransferChart writes transfer.png into dir: aggregate MB/s over time, a
// line per client count. It returns the file written.
func TransferChart(r *TransferReport, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %d files (%s), read to /dev/null by sitebox's client", strings.Join(r.Config.URLs, ", "), r.Files, MB(r.Bytes))
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "seconds from start"
	p.Y.Label.Text = "aggregate MB/s (10⁶ B/s)"
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	ymax := 1.0
	for i, pt := range r.Points {
		if len(pt.Series) == 0 {
			continue
		}
		// A step per sample, over the second it measured.
		xys := make(plotter.XYs, 0, len(pt.Series)+1)
		for _, s := range pt.Series {
			xys = append(xys, plotter.XY{X: s.T, Y: s.MBps})
			ymax = max(ymax, s.MBps)
		}
		xys = append(xys, plotter.XY{X: pt.Seconds, Y: pt.Series[len(pt.Series)-1].MBps})
		l, err := plotter.NewLine(xys)
		if err != nil {
			return "", err
		}
		l.Color, l.Width, l.StepStyle = plotutil.Color(i), vg.Points(1.5), plotter.PostStep
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%d client(s): mean %.1f MB/s, p10 %.1f, p90 %.1f", pt.Clients, pt.MBps, pt.P10, pt.P90), l)
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.25 // room for the legend
	p.X.Min = 0
	path := filepath.Join(dir, "transfer.png")
	if err := p.Save(9*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("chart %s: %w", path, err)
	}
	return path, nil
}
