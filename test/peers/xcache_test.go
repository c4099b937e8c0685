package peers

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestXcacheServesAndCaches(t *testing.T) {
	Require(t, "xrootd")
	Require(t, "xrdcp")
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	want := make([]byte, 3<<20+12345)
	rand.Read(want)
	if err := os.WriteFile(filepath.Join(data, "f.dat"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	oport, _ := FreePort()
	origin, err := StartXrootd(ctx, XrootdConfig{DataDir: data, Port: oport, Name: "xcorigin", WorkDir: filepath.Join(dir, "origin")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(origin.Stop)
	cport, _ := FreePort()
	cacheDir := filepath.Join(dir, "cache")
	xc, err := StartXcache(ctx, XcacheConfig{
		Origin: "127.0.0.1:" + strconv.Itoa(oport), Port: cport, Name: "xctest",
		WorkDir: filepath.Join(dir, "xcache"), CacheDir: cacheDir,
		BlockSize: 1 << 20, DiskLow: 64 << 20, DiskHigh: 128 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(xc.Stop)

	for i := range 2 {
		out := filepath.Join(dir, "out"+strconv.Itoa(i))
		cmd := exec.Command("xrdcp", "-f", "-s", "root://127.0.0.1:"+strconv.Itoa(cport)+"//f.dat", out)
		cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("xrdcp through xcache: %v: %s\n%s", err, b, xc.tail(filepath.Join(dir, "xcache", "log", "xctest", "xrootd.log")))
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, want) {
			t.Fatalf("read %d: %d bytes differ from the origin's %d", i, len(got), len(want))
		}
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "f.dat")); err != nil {
		t.Errorf("nothing cached: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "f.dat.cinfo")); err != nil {
		t.Errorf("no block map: %v", err)
	}
	rss, err := xc.RSS()
	if err != nil || rss <= 0 {
		t.Errorf("RSS = %d, %v", rss, err)
	}
	peak, _ := xc.PeakRSS()
	if peak < rss {
		t.Errorf("peak RSS %d below current %d", peak, rss)
	}
}

func TestXrdLevel(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.9, "0.9"},
		{1, "1"},
		{64 << 20, "64m"},
		{2 << 30, "2g"},
		{1500, "2k"},
	} {
		if got := xrdLevel(tc.in); got != tc.want {
			t.Errorf("xrdLevel(%g) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
