package sitebench

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/transfer"
	"sitebox/test/peers"
)

// transferBox is a sitebox box serving a directory of random files as
// /data over root:// and https://.
type transferBox struct {
	root, https string // base URLs
	cert        string // its self-signed certificate, for https://
	files       int
	proc        *peers.Process
}

func startTransferBox(t *testing.T) *transferBox {
	t.Helper()
	bin := siteboxBinary(t)
	data := t.TempDir()
	// Sizes from under one chunk to several, so copies run parallel
	// chunk reads and end on a partial one.
	sizes := []int{1 << 20, 3<<20 + 17, 2*transfer.ChunkSize + 5}
	for i, n := range sizes {
		b := make([]byte, n)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(data, fmt.Sprintf("f%d", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	rp, err := peers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	hp, err := peers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := peers.StartSitebox(context.Background(), bin, []int{rp, hp}, "serve", "--export", "/data="+data+":ro",
		"--root-addr", "127.0.0.1:"+strconv.Itoa(rp), "--https-addr", "127.0.0.1:"+strconv.Itoa(hp),
		"--state-dir", state, "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("sitebox log:\n%s", p.Log.String())
		}
	})
	return &transferBox{
		root:  "root://127.0.0.1:" + strconv.Itoa(rp) + "/",
		https: "https://127.0.0.1:" + strconv.Itoa(hp),
		cert:  filepath.Join(state, "tls", "cert.pem"),
		files: len(sizes),
		proc:  p,
	}
}

// Two client counts for 2 s each against a real box, over root:// and
// over https:// (a directory plus one of its files named again): bytes
// move, nothing fails, empty files and subdirectories are not picked,
// and the table and chart come out.
func TestTransferBench(t *testing.T) {
	box := startTransferBox(t)
	tests := []struct {
		name  string
		urls  []string
		files int
	}{
		{"root", []string{box.root + "/data"}, box.files},
		{"https", []string{box.https + "/data/", box.https + "/data/f1"}, box.files + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := Transfer(ctx, TransferConfig{URLs: tt.urls, Clients: []int{1, 2}, Duration: 2 * time.Second,
				Options: transfer.Options{CAFile: box.cert}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Files != tt.files {
				t.Errorf("%d files in the pick list, want %d", rep.Files, tt.files)
			}
			table := FormatTransfer(rep)
			t.Logf("\n%s", table)
			if len(rep.Points) != 2 {
				t.Fatalf("%d points, want 2", len(rep.Points))
			}
			for _, p := range rep.Points {
				if p.MBps <= 0 || p.Files == 0 || p.Errors != 0 || len(p.Series) != 2 {
					t.Errorf("%d clients: %.1f MB/s, %d files, %d errors (%s), %d samples; want bytes, files, no errors, 2 samples",
						p.Clients, p.MBps, p.Files, p.Errors, p.FirstError, len(p.Series))
				}
				if p.P10 > p.P90 || p.Seconds < 1.9 || p.Seconds > 3 {
					t.Errorf("%d clients: p10 %.1f p90 %.1f over %.2fs", p.Clients, p.P10, p.P90, p.Seconds)
				}
				if row := fmt.Sprintf("| %d | %.1f |", p.Clients, p.MBps); !strings.Contains(table, row) {
					t.Errorf("table has no row starting %q", row)
				}
			}
			png, err := TransferChart(rep, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			checkPNG(t, png)
		})
	}
}

// URLs that give nothing to measure fail before any client starts, with
// the URL and the reason in the error.
func TestTransferBadURLs(t *testing.T) {
	box := startTransferBox(t)
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"not a URL scheme", "ftp://127.0.0.1/data", "not a root://"},
		{"missing", box.root + "/data/nope", "does not exist"},
		{"empty file", box.https + "/data/empty", "empty"},
		{"no files", box.root + "/data/sub", "no non-empty files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Transfer(context.Background(), TransferConfig{URLs: []string{tt.url}, Duration: time.Second,
				Options: transfer.Options{CAFile: box.cert}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// A server that dies mid-run gives counted errors, not a hang or a crash,
// and the window still ends on time.
func TestTransferServerGone(t *testing.T) {
	box := startTransferBox(t)
	go func() {
		time.Sleep(time.Second)
		box.proc.Kill() // gone at once: a SIGTERM now drains gracefully
	}()
	start := time.Now()
	rep, err := Transfer(context.Background(), TransferConfig{URLs: []string{box.root + "/data"}, Clients: []int{2}, Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v for a 2s window", took)
	}
	p := rep.Points[0]
	t.Logf("%.1f MB/s, %d files, %d errors, first: %s", p.MBps, p.Files, p.Errors, p.FirstError)
	if p.Files == 0 || p.Errors == 0 || p.FirstError == "" {
		t.Errorf("%d files, %d errors (%q): want copies before the stop and errors after", p.Files, p.Errors, p.FirstError)
	}
	if !strings.Contains(FormatTransfer(rep), "Errors:\n- 2 clients, first of") {
		t.Errorf("the table does not show the errors:\n%s", FormatTransfer(rep))
	}
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"none", nil, 0.1, 0},
		{"one", []float64{5}, 0.9, 5},
		{"p10 interpolates", []float64{30, 10, 20}, 0.1, 12},
		{"p90 interpolates", []float64{30, 10, 20}, 0.9, 28},
		{"median", []float64{4, 1, 3, 2}, 0.5, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.xs, tt.q); got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
		})
	}
}
