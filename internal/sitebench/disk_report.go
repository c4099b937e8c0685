package sitebench

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FormatDisk renders the report as Markdown: the conditions, then one
// row per writer count and mode, the shape of the storage tables in site
// reports (RAID6 against ZFS, NFS against a storage element).
func FormatDisk(r *DiskReport) string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "## Disk: %s (%s), %d CPUs\n\n", c.Dir, r.FSType, r.CPUs)
	fmt.Fprintf(&b, "Each writer writes its own %s file of random data in %s blocks and fdatasyncs it; "+
		"then as many readers read the files back, all at once. O_DIRECT: aligned buffers, no page cache. "+
		"Buffered: through the page cache, reads after fadvise(DONTNEED) so they come from the disk.\n\n", MiB(c.FileSize), MiB(c.BlockSize))
	fmt.Fprintf(&b, "MB/s = 10⁶ B/s. Aggregate: all bytes ÷ (first start to last finish); per writer: the mean of each stream's own MB/s; "+
		"CPU: the machine's busy share of all %d cores (kernel threads included).\n\n", r.CPUs)
	b.WriteString("| writers | direct I/O | write MB/s | read MB/s | per-writer MB/s (write / read) | CPU % (write / read) |\n")
	b.WriteString("|---:|:---|---:|---:|---:|---:|\n")
	var errs []string
	for _, p := range r.Points {
		direct := "off"
		if p.Direct {
			direct = "on"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s / %s | %s / %s |\n", p.Writers, direct, mbpsCell(p.Write.MBps), mbpsCell(p.Read.MBps),
			mbpsCell(p.Write.PerStream), mbpsCell(p.Read.PerStream), cpuText(p.Write), cpuText(p.Read))
		if p.Err != "" {
			errs = append(errs, fmt.Sprintf("- %d writers, %s: %s", p.Writers, modeName(p.Direct), p.Err))
		}
	}
	if len(errs) > 0 {
		b.WriteString("\nFailed:\n" + strings.Join(errs, "\n") + "\n")
	}
	switch r.FSType {
	case "zfs":
		b.WriteString("\nZFS: fadvise does not evict the ARC, so buffered reads may come from RAM unless writers × size outgrows it.\n")
	case "tmpfs":
		b.WriteString("\ntmpfs lives in RAM: these figures are memory bandwidth, not a disk's.\n")
	}
	return b.String()
}

// mbpsCell is a MB/s figure of the table, "—" when not measured.
func mbpsCell(v float64) string {
	if v <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", v)
}

// cpuText is a phase's CPU share, "—" when the phase moved nothing.
func cpuText(ph DiskPhase) string {
	if ph.MBps <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", ph.CPU)
}

// diskColor keeps a mode's colour the same in every chart: O_DIRECT in
// sitebox blue, buffered in orange (the colours of the comparison charts).
func diskColor(direct bool) color.Color {
	if direct {
		return color.RGBA{R: 31, G: 119, B: 180, A: 255}
	}
	return color.RGBA{R: 230, G: 120, B: 20, A: 255}
}

// DiskChart writes disk.png into dir: aggregate MB/s against the writer
// count, a line per mode and direction (writes solid, reads dashed). It
// returns the file written.
func DiskChart(r *DiskReport, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%s): %s per writer, %s blocks, readers = writers", r.Config.Dir, r.FSType, MiB(r.Config.FileSize), MiB(r.Config.BlockSize))
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "parallel writers (and readers)"
	p.Y.Label.Text = "aggregate MB/s (10⁶ B/s)"
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	var ticks []plot.Tick
	xmax := 1.0
	for _, n := range r.Config.Writers {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
		xmax = max(xmax, float64(n))
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	ymax := 1.0
	for _, direct := range r.Config.Direct {
		for _, read := range []bool{false, true} {
			var xys plotter.XYs
			for _, pt := range r.Points {
				ph := pt.Write
				if read {
					ph = pt.Read
				}
				if pt.Direct == direct && ph.MBps > 0 {
					xys = append(xys, plotter.XY{X: float64(pt.Writers), Y: ph.MBps})
					ymax = max(ymax, ph.MBps)
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return "", err
			}
			col := diskColor(direct)
			l.Color, l.Width = col, vg.Points(1.5)
			s.Color, s.Shape = col, draw.CircleGlyph{}
			name := modeName(direct) + " write"
			if read {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				s.Shape = draw.BoxGlyph{}
				name = modeName(direct) + " read"
			}
			p.Add(l, s)
			p.Legend.Add(name, l, s)
		}
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.3 // room for the legend
	p.X.Min, p.X.Max = 0, xmax+0.5
	path := filepath.Join(dir, "disk.png")
	if err := p.Save(9*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("chart %s: %w", path, err)
	}
	return path, nil
}
