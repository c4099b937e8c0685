package fleet

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FormatMatrix renders a director's probe statistics as one site-to-site
// table per day (newest first, at most days of them): rows are the
// probing box, columns the probed one, cells the day's average MB/s with
// its low and high, as regional operators' metrics pages show them.
func FormatMatrix(cells []MatrixCell, days int) string {
	if len(cells) == 0 {
		return "No probes yet: set [probe] interval on the boxes that advertise to this director.\n"
	}
	byDay := map[string][]MatrixCell{}
	var dayList []string
	for _, c := range cells {
		if byDay[c.Day] == nil {
			dayList = append(dayList, c.Day)
		}
		byDay[c.Day] = append(byDay[c.Day], c)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dayList)))
	if days > 0 && len(dayList) > days {
		dayList = dayList[:days]
	}
	var b strings.Builder
	for _, day := range dayList {
		from, to, cell := matrixAxes(byDay[day])
		fmt.Fprintf(&b, "### %s (UTC): MB/s, average (low–high) of the day's probes, from row to column\n\n", day)
		b.WriteString("| from \\ to |")
		for _, t := range to {
			b.WriteString(" " + t + " |")
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(to)) + "\n")
		for _, f := range from {
			b.WriteString("| " + f + " |")
			for _, t := range to {
				c, ok := cell[[2]string{f, t}]
				switch {
				case !ok:
					b.WriteString(" — |")
				case c.N == 0:
					fmt.Fprintf(&b, " failed ×%d |", c.Fails)
				default:
					fmt.Fprintf(&b, " %.0f (%.0f–%.0f)", c.Avg, c.Min, c.Max)
					if c.Fails > 0 {
						fmt.Fprintf(&b, ", %d failed", c.Fails)
					}
					b.WriteString(" |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func matrixAxes(cs []MatrixCell) (from, to []string, cell map[[2]string]MatrixCell) {
	cell = map[[2]string]MatrixCell{}
	fs, ts := map[string]bool{}, map[string]bool{}
	for _, c := range cs {
		fs[c.From], ts[c.To] = true, true
		cell[[2]string{c.From, c.To}] = c
	}
	for f := range fs {
		from = append(from, f)
	}
	for t := range ts {
		to = append(to, t)
	}
	sort.Strings(from)
	sort.Strings(to)
	return from, to, cell
}

// MatrixChart draws the newest day's averages as a heat map into
// dir/matrix.png.
func MatrixChart(cells []MatrixCell, dir string) (string, error) {
	if len(cells) == 0 {
		return "", fmt.Errorf("no probes to draw")
	}
	day := cells[0].Day
	for _, c := range cells {
		if c.Day > day {
			day = c.Day
		}
	}
	var today []MatrixCell
	for _, c := range cells {
		if c.Day == day {
			today = append(today, c)
		}
	}
	from, to, cell := matrixAxes(today)
	g := &matrixGrid{from: from, to: to, cell: cell}
	p := plot.New()
	p.Title.Text = "Site-to-site throughput, MB/s (average of " + day + ")"
	p.X.Label.Text = "to"
	p.Y.Label.Text = "from"
	pal := palette.Heat(32, 1)
	hm := plotter.NewHeatMap(g, pal)
	hm.NaN = color.RGBA{R: 220, G: 220, B: 220, A: 255}
	p.Add(hm)
	p.X.Tick.Marker = labels(to)
	p.Y.Tick.Marker = labels(from)
	for i, f := range from {
		for k, t := range to {
			if c, ok := cell[[2]string{f, t}]; ok && c.N > 0 {
				lb, err := plotter.NewLabels(plotter.XYLabels{XYs: []plotter.XY{{X: float64(k), Y: float64(i)}}, Labels: []string{fmt.Sprintf("%.0f", c.Avg)}})
				if err == nil {
					lb.TextStyle[0].XAlign, lb.TextStyle[0].YAlign = draw.XCenter, draw.YCenter
					p.Add(lb)
				}
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "matrix.png")
	w := vg.Length(120+90*len(to)) * vg.Points(1)
	h := vg.Length(100+70*len(from)) * vg.Points(1)
	return path, p.Save(w, h, path)
}

// matrixGrid is the heat map's data: rows from, columns to.
type matrixGrid struct {
	from, to []string
	cell     map[[2]string]MatrixCell
}

func (g *matrixGrid) Dims() (c, r int) { return len(g.to), len(g.from) }
func (g *matrixGrid) X(c int) float64  { return float64(c) }
func (g *matrixGrid) Y(r int) float64  { return float64(r) }
func (g *matrixGrid) Z(c, r int) float64 {
	if x, ok := g.cell[[2]string{g.from[r], g.to[c]}]; ok && x.N > 0 {
		return x.Avg
	}
	return math.NaN()
}

// labels puts names on integer ticks.
type labels []string

func (l labels) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for i, s := range l {
		ts = append(ts, plot.Tick{Value: float64(i), Label: s})
	}
	return ts
}
