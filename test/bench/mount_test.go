package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestMountBenchEndToEnd runs a tiny mount bench at one round trip time:
// every setup and workload, and checks each measured what it should and
// left nothing mounted. `sitebox mount` is measured when the binary has
// it, and reported as not available otherwise.
func TestMountBenchEndToEnd(t *testing.T) {
	for _, tool := range []string{"xrootdfs", "rclone", "fio", "fusermount3", "make", "cc", "xrdcp"} {
		peers.Require(t, tool)
	}
	peers.RequireFile(t, "/dev/fuse", "the FUSE device")
	peers.RequireToxiproxy(t)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the mount bench mounts FUSE file systems: run it as root under CI")
		}
		t.Skip("mounting needs root")
	}
	py := os.Getenv("SITEBOX_PYTHON")
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SITEBOX_PYTHON is not set: the uproot workload needs Python with uproot")
		}
		t.Skip("SITEBOX_PYTHON is not set")
	}
	work := t.TempDir()
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := Mount(ctx, MountConfig{
		Sitebox: built.Binary(t), WorkDir: work, Python: py,
		RTTs: []time.Duration{2 * time.Millisecond}, Scale: 1000, Sources: 8, Headers: 10,
		SeqSize: 8 << 20, FioSize: 2 << 20, FioTime: time.Second, Readers: []int{1, 2}, Entries: 10_000, Jobs: 1, FindEntries: 2500,
		Out: &progress,
	})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	table := FormatMount(rep)
	t.Logf("\n%s", table)
	if len(rep.Points) != len(mountSetups) {
		t.Fatalf("%d points, want %d", len(rep.Points), len(mountSetups))
	}
	for _, p := range rep.Points {
		t.Run(p.Setup, func(t *testing.T) {
			if p.Unavailable != "" {
				if p.Setup != "sitebox" {
					t.Fatalf("not available: %s", p.Unavailable)
				}
				t.Logf("not measured: %s", p.Unavailable)
				return
			}
			for _, e := range p.Errs {
				t.Error(e)
			}
			if p.SeqMBps <= 0 || p.Uproot[1] <= 0 || p.Uproot[2] <= 0 {
				t.Errorf("sequential %.1f MB/s, uproot %v", p.SeqMBps, p.Uproot)
			}
			if p.Setup == "root" || p.Setup == rootCacheSetup {
				return
			}
			if p.BuildCold <= 0 || p.BuildWarm <= 0 || p.SweepCold <= 0 || p.SweepWarm <= 0 || p.FioIOPS <= 0 {
				t.Errorf("build %v/%v, sweep %v/%v, fio %.0f IOPS", p.BuildCold, p.BuildWarm, p.SweepCold, p.SweepWarm, p.FioIOPS)
			}
			if !strings.Contains(table, "| "+p.Setup+" ") {
				t.Errorf("table has no row for %s", p.Setup)
			}
		})
	}
	mnt, _ := filepath.Abs(filepath.Join(work, "mnt"))
	entries, _ := os.ReadDir(mnt)
	for _, e := range entries {
		if peers.Mounted(filepath.Join(mnt, e.Name())) {
			t.Errorf("%s is still mounted", e.Name())
		}
	}
}

// The protection levels and workloads the config takes, and the rows
// the sitebox setup gets per level.
func TestMountConfigProtections(t *testing.T) {
	c := MountConfig{Sitebox: "/bin/true", WorkDir: t.TempDir(), Workloads: []string{"fiorw"}, Protections: []string{"auth", "integrity", "privacy"}}
	c.applyDefaults()
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	c.Protections = []string{"krb5p"}
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), `protection "krb5p"`) {
		t.Errorf("an unknown level: %v", err)
	}
	for _, c := range []struct {
		p    MountPoint
		want string
	}{{MountPoint{Setup: "sitebox", Protection: "auth"}, "sitebox"}, {MountPoint{Setup: "sitebox", Protection: "privacy"}, "sitebox privacy"}, {MountPoint{Setup: "local"}, "local"}} {
		if p, want := c.p, c.want; p.label() != want {
			t.Errorf("label of %s/%s: %q, want %q", p.Setup, p.Protection, p.label(), want)
		}
	}
}
