package sitebench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// checkPNG fails the test unless path is a non-empty PNG.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1000 || !bytes.HasPrefix(b, pngMagic) {
		t.Fatalf("%s: %d bytes, PNG header %t; want a chart", path, len(b), bytes.HasPrefix(b, pngMagic))
	}
}

// A quick run on a temporary directory measures every point, leaves no
// test file behind and renders the table and the chart.
func TestDiskQuick(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rep, err := Disk(ctx, DiskConfig{Dir: dir, FileSize: 8 << 20, Writers: []int{1, 2}, Out: &progress})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Points) != 4 {
		t.Fatalf("%d points, want 4 (2 writer counts × 2 modes)", len(rep.Points))
	}
	for _, p := range rep.Points {
		if p.Direct && strings.Contains(p.Err, "does not support O_DIRECT") {
			t.Logf("%s: %s", rep.FSType, p.Err) // a tmpfs TMPDIR
			continue
		}
		if p.Err != "" || p.Write.MBps <= 0 || p.Read.MBps <= 0 || p.Write.PerStream <= 0 || p.Read.PerStream <= 0 {
			t.Errorf("%d writers %s: %+v", p.Writers, modeName(p.Direct), p)
		}
		if want := int64(p.Writers) * (8 << 20); p.Write.Bytes != want || p.Read.Bytes != want {
			t.Errorf("%d writers %s: wrote %d, read %d bytes, want %d", p.Writers, modeName(p.Direct), p.Write.Bytes, p.Read.Bytes, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("test files left behind: %v", left)
	}
	table := FormatDisk(rep)
	t.Logf("\n%s", table)
	for _, row := range []string{"| 1 | on | ", "| 2 | on | ", "| 1 | off | ", "| 2 | off | "} {
		if !strings.Contains(table, row) {
			t.Errorf("table has no row starting %q", row)
		}
	}
	png, err := DiskChart(rep, filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, png)
}

func TestDiskConfigErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		name string
		cfg  DiskConfig
		want string
	}{
		{"no dir", DiskConfig{}, "no directory"},
		{"missing dir", DiskConfig{Dir: filepath.Join(dir, "nope")}, "no such file"},
		{"a file", DiskConfig{Dir: file}, "not a directory"},
		{"zero writers", DiskConfig{Dir: dir, Writers: []int{1, 0}}, "writer count 0"},
		{"block over size", DiskConfig{Dir: dir, FileSize: 4096, BlockSize: 8192}, "smaller than the block size"},
		{"unaligned block", DiskConfig{Dir: dir, BlockSize: 1000}, "multiple of 4096"},
		{"partial block", DiskConfig{Dir: dir, FileSize: 3 << 20, BlockSize: 2 << 20}, "whole number"},
		{"too big for the disk", DiskConfig{Dir: dir, FileSize: 1 << 50}, "free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Disk(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one saying %q", err, tt.want)
			}
		})
	}
	// Buffered I/O takes any block size and a partial last block.
	rep, err := Disk(context.Background(), DiskConfig{Dir: dir, FileSize: 10000, BlockSize: 3000, Writers: []int{1}, Direct: []bool{false}})
	if err != nil || len(rep.Points) != 1 || rep.Points[0].Err != "" || rep.Points[0].Read.Bytes != 10000 {
		t.Errorf("buffered odd sizes: %+v %v", rep, err)
	}
}
