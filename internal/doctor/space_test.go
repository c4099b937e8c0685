package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sitebox/internal/config"
)

func TestSpace(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name  string
		fs    FSInfo
		want  Status
		texts []string
	}{
		{"plenty", FSInfo{Total: 1000 * gib, Avail: 500 * gib, Files: 1000, FilesFree: 900}, StatusOK, []string{"500.0 GiB free of 1000.0 GiB (50.0 %)", "900 of 1000 inodes free"}},
		{"full", FSInfo{Total: 1000 * gib, Avail: 5 * gib, Files: 1000, FilesFree: 900}, StatusError, []string{"is almost full", "(0.5 %)", "no space left on device", "du -xsh"}},
		{"small but under 1 GiB", FSInfo{Total: 4 * gib, Avail: gib / 2, Files: 1000, FilesFree: 900}, StatusError, []string{"is almost full"}},
		{"filling", FSInfo{Total: 1000 * gib, Avail: 50 * gib, Files: 1000, FilesFree: 900}, StatusWarn, []string{"is filling up", "(5.0 %)"}},
		{"inodes out", FSInfo{Total: 1000 * gib, Avail: 500 * gib, Files: 1000, FilesFree: 10}, StatusError, []string{"almost no inodes left", "10 of 1000 inodes", "mkfs.ext4 -i"}},
		{"inodes low", FSInfo{Total: 1000 * gib, Avail: 500 * gib, Files: 1000, FilesFree: 50}, StatusWarn, []string{"running out of inodes"}},
		{"no inode table", FSInfo{Total: 1000 * gib, Avail: 500 * gib}, StatusOK, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t, config.Off, config.Off)
			pool := cfg.Exports[0].Pools[0]
			o := Options{Statfs: func(p string) (FSInfo, error) {
				if p == pool {
					return tc.fs, nil
				}
				return healthyFS(p)
			}}.withDefaults()
			cs := checkSpace(context.Background(), cfg, o)
			if len(cs) != 2 {
				t.Fatalf("want pool and state dir, got %+v", cs)
			}
			mustHave(t, cs[0], tc.want, append(tc.texts, pool)...)
			mustHave(t, cs[1], StatusOK, "state dir")
		})
	}
}

func TestSpaceMissingDirs(t *testing.T) {
	cfg := baseConfig(t, config.Off, config.Off)
	pool := filepath.Join(t.TempDir(), "gone")
	cfg.Exports[0].Pools = []string{pool}
	cfg.Server.StateDir = filepath.Join(t.TempDir(), "not", "yet")
	cs := checkSpace(context.Background(), cfg, Options{Statfs: healthyFS}.withDefaults())
	mustHave(t, cs[0], StatusError, pool+" does not exist", "mkdir -p")
	mustHave(t, cs[1], StatusOK, "where it will be made")
}

// TestSpaceRealTmpfs fills a real 2 MiB tmpfs (needs root and mount).
func TestSpaceRealTmpfs(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("mount tmpfs: %v %s", err, strings.TrimSpace(string(out)))
		}
		t.Skipf("cannot mount a tmpfs: %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Exports[0].Pools = []string{dir}
	cs := checkSpace(context.Background(), cfg, Options{}.withDefaults())
	mustHave(t, cs[0], StatusError, dir+" is almost full", "0 B free of 2.0 MiB", "uploads to /store fail")
}
