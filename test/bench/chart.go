package bench

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sitebox/internal/sitebench"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// setupColor keeps a setup's colour the same in every chart.
func setupColor(setup string) color.Color {
	switch setup {
	case "direct":
		return color.RGBA{R: 110, G: 110, B: 110, A: 255}
	case "sitebox":
		return color.RGBA{R: 31, G: 119, B: 180, A: 255}
	case "xcache":
		return color.RGBA{R: 230, G: 120, B: 20, A: 255}
	}
	return color.Black
}

// CacheCharts writes one PNG per client count into dir, cache-N<n>.png:
// aggregate client MB/s over time, a line per setup, and a dashed vertical
// line of the same colour where that setup's cold phase ended. It returns
// the files written.
func CacheCharts(r *CacheReport, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, n := range r.Config.Clients {
		var pts []CachePoint
		for _, p := range r.Points {
			if p.Clients == n && p.Err == "" && len(p.Series) > 0 {
				pts = append(pts, p)
			}
		}
		if len(pts) == 0 {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("cache-N%d.png", n))
		if err := cacheChart(pts, r.Config, n, path); err != nil {
			return files, fmt.Errorf("chart %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

func cacheChart(pts []CachePoint, c CacheConfig, n int, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%d client(s), %d × %s files, link +%v each way, %s per connection (dashed: end of cold phase)",
		n, c.Files, sitebench.MB(c.FileSize), c.Latency, rateText(c.Bandwidth))
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "seconds from start (empty cache)"
	p.Y.Label.Text = "aggregate MB/s (10⁶ B/s)"
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	ymax := 1.0
	for _, pt := range pts {
		for _, s := range pt.Series {
			ymax = max(ymax, s.MBps)
		}
	}
	ymax *= 1.1
	for _, pt := range pts {
		xys := make(plotter.XYs, len(pt.Series))
		for i, s := range pt.Series {
			xys[i].X, xys[i].Y = s.T, s.MBps
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		col := setupColor(pt.Setup)
		l.Color, l.Width = col, vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s: cold %.0f, warm %.0f MB/s", pt.Setup, pt.Cold.MBps, pt.Warm.MBps), l)
		m, err := plotter.NewLine(plotter.XYs{{X: pt.ColdEnd, Y: 0}, {X: pt.ColdEnd, Y: ymax}})
		if err != nil {
			return err
		}
		m.Color, m.Width, m.Dashes = col, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(m)
	}
	p.Y.Min, p.Y.Max = 0, ymax
	p.X.Min = 0
	return p.Save(9*vg.Inch, 4.5*vg.Inch, path)
}
