package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sitebox/test/peers"
)

// findPerDir is how many files each directory of the find tree holds.
const findPerDir = 1000

// findTree is the directory of the find workload's empty files: many
// names, no data, so it costs the origin's disk only inodes. A marker
// written last lets a rerun with the same work directory reuse it.
func (c *MountConfig) findTree() string { return fmt.Sprintf("find-%d", c.FindEntries) }

func writeFindTree(dir string, entries int) error {
	marker := filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	for i := 0; i < entries; i += findPerDir {
		sub := filepath.Join(dir, fmt.Sprintf("d%05d", i/findPerDir))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for j := i; j < min(i+findPerDir, entries); j++ {
			f, err := os.OpenFile(filepath.Join(sub, fmt.Sprintf("f%07d", j)), os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			f.Close()
		}
	}
	return os.WriteFile(marker, nil, 0o644)
}

// findSetups are the setups the find workload runs on: the mounts
// without a listing cache of their own (xrootdfs, rclone) would take
// hours over a million names at WAN round trips.
func findSetup(setup string) bool { return setup == "local" || setup == "sitebox" }

// runFind walks the tree with find(1) on a fresh mount, checks it saw
// every name, and records the time and the mount process's peak memory.
func (e *mountEnv) runFind(ctx context.Context, k mountKind, p *MountPoint) error {
	return e.withMountProc(ctx, k, func(root string, m *peers.FuseMount) error {
		t0 := time.Now()
		out, err := exec.CommandContext(ctx, "find", filepath.Join(root, e.cfg.findTree()), "-type", "f", "-name", "f*").Output()
		if err != nil {
			return fmt.Errorf("find: %w", err)
		}
		p.Find = time.Since(t0)
		if n := strings.Count(string(out), "\n"); n != e.cfg.FindEntries {
			return fmt.Errorf("find saw %d files, want %d", n, e.cfg.FindEntries)
		}
		if m != nil {
			rss, err := m.Proc.PeakRSS()
			if err != nil {
				return fmt.Errorf("peak RSS of the mount: %w", err)
			}
			p.FindRSS = rss
		}
		return nil
	})
}

// findSummary is the find workload's line of the report.
func findSummary(rep *MountReport) string {
	var b strings.Builder
	for _, p := range rep.Points {
		if p.Find <= 0 {
			continue
		}
		fmt.Fprintf(&b, "\nfind over %s files, %v %s: %s", strconv.Itoa(rep.Config.FindEntries), p.RTT, p.label(), secs(p.Find))
		if p.FindRSS > 0 {
			fmt.Fprintf(&b, ", peak RSS of the mount %d MiB", p.FindRSS>>20)
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
