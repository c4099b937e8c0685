package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMatrixFormatAndChart(t *testing.T) {
	now := time.Now()
	cells := []MatrixCell{
		{From: "alpha", To: "beta", Day: "2026-11-23", N: 3, Avg: 600, Min: 400, Max: 900, At: now},
		{From: "beta", To: "alpha", Day: "2026-11-23", N: 2, Avg: 500, Min: 450, Max: 550, At: now},
		{From: "alpha", To: "gamma", Day: "2026-11-23", Fails: 2, At: now},
		{From: "alpha", To: "beta", Day: "2026-11-22", N: 1, Avg: 100, Min: 100, Max: 100, At: now},
	}
	out := FormatMatrix(cells, 1)
	for _, want := range []string{"2026-11-23", "| alpha | — | 600 (400–900) | failed ×2 |", "| beta | 500 (450–550) | — | — |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "2026-11-22") {
		t.Error("--days 1 printed an older day")
	}
	dir := t.TempDir()
	if d := os.Getenv("SITEBOX_ARTIFACTS"); d != "" {
		dir = d
	}
	p, err := MatrixChart(cells, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if len(b) < 100 || string(b[1:4]) != "PNG" || filepath.Base(p) != "matrix.png" {
		t.Errorf("chart %s: %d bytes", p, len(b))
	}
	if !strings.Contains(FormatMatrix(nil, 1), "No probes yet") {
		t.Error("empty matrix not explained")
	}
}
