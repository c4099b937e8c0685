package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sitebox/internal/config"
	"sitebox/internal/units"
)

// Free space limits. Below 2 % (or 1 GiB) a single upload or a burst of
// cached blocks can fill the disk; below 10 % most filesystems slow down
// and there is little room left to react.
const (
	freeErrorPct  = 2.0
	freeErrorSize = 1 << 30
	freeWarnPct   = 10.0
)

// spacePath is a directory the box writes to and why it matters.
type spacePath struct {
	path, role, effect string
	mustExist          bool // else the box creates it: check the parent
}

// checkSpace looks at free space and free inodes wherever the box writes.
func checkSpace(_ context.Context, cfg *config.Config, o *Options) []Check {
	var paths []spacePath
	for _, e := range cfg.Exports {
		for _, p := range e.Pools {
			paths = append(paths, spacePath{p, "export " + e.Prefix + " pool", "uploads to " + e.Prefix + " fail", true})
		}
	}
	if cfg.Cache.Dir != "" {
		paths = append(paths, spacePath{cfg.Cache.Dir, "cache dir", "the cache stops keeping blocks and every read goes upstream", false})
	}
	if cfg.Jobs.Enabled && cfg.Jobs.Dir != "" {
		paths = append(paths, spacePath{cfg.Jobs.Dir, "jobs dir", "job sandboxes cannot be made and jobs fail to start", false})
	}
	if cfg.Server.StateDir != "" {
		paths = append(paths, spacePath{cfg.Server.StateDir, "state dir", "the job queue, keys and certificates cannot be written", false})
	}
	if len(paths) == 0 {
		return []Check{{Name: "disks", Status: StatusSkip, Summary: "no directories configured"}}
	}
	var out []Check
	for _, p := range paths {
		out = append(out, checkFS(p, o))
	}
	return out
}

func checkFS(p spacePath, o *Options) Check {
	c := Check{Name: p.role + " " + p.path}
	at := p.path
	if _, err := os.Stat(at); errors.Is(err, os.ErrNotExist) {
		if p.mustExist {
			c.Status, c.Summary = StatusError, p.path+" does not exist"
			c.Fix = "Create it (mkdir -p " + p.path + ") on the disk meant for it, or correct the config."
			return c
		}
		at = existingParent(at)
	}
	fs, err := o.Statfs(at)
	if err != nil {
		c.Status, c.Summary = StatusWarn, "cannot read the free space: "+err.Error()
		return c
	}
	if fs.Total == 0 {
		c.Status, c.Summary = StatusSkip, p.path+" is on a filesystem that reports no size"
		return c
	}
	pct := 100 * float64(fs.Avail) / float64(fs.Total)
	nums := fmt.Sprintf("%s free of %s (%.1f %%)", units.FormatSize(int64(fs.Avail)), units.FormatSize(int64(fs.Total)), pct)
	var heads []string
	c.Status = StatusOK
	// grade records one finding; an error's explanation wins over a
	// warning's.
	grade := func(s Status, head, explain, fix string) {
		heads = append(heads, head)
		if s == StatusError || c.Status == StatusOK {
			c.Status, c.Explain, c.Fix = s, explain, fix
		}
	}
	full := fmt.Sprintf("When %s is full, %s (\"no space left on device\").", p.path, p.effect)
	fix := fmt.Sprintf("Free space on that filesystem (`du -xsh %s/* | sort -h` shows what is big), or move the %s to a larger disk.", p.path, p.role)
	if p.role == "cache dir" {
		fix += " If other data shares the disk, lower [cache] high_water so the cache leaves room."
	}
	switch {
	case pct < freeErrorPct || fs.Avail < freeErrorSize:
		grade(StatusError, p.path+" is almost full", full, fix)
	case pct < freeWarnPct:
		grade(StatusWarn, p.path+" is filling up", full, fix)
	}
	if fs.Files > 0 {
		ipct := 100 * float64(fs.FilesFree) / float64(fs.Files)
		nums += fmt.Sprintf(", %d of %d inodes free (%.1f %%)", fs.FilesFree, fs.Files, ipct)
		ifull := fmt.Sprintf("Every file needs an inode; when they run out, new files in %s fail with \"no space left on device\" even with bytes free.", p.path)
		ifix := "Remove small files you do not need (`df -i` shows use), or make the filesystem anew with more inodes (mkfs.ext4 -i 16384) or as XFS, which adds them as needed."
		switch {
		case ipct < freeErrorPct:
			grade(StatusError, p.path+" has almost no inodes left", ifull, ifix)
		case ipct < freeWarnPct:
			grade(StatusWarn, p.path+" is running out of inodes", ifull, ifix)
		}
	}
	if at != p.path {
		nums += " on " + at + ", where it will be made"
	}
	c.Summary = nums
	if len(heads) > 0 {
		c.Summary = strings.Join(heads, "; ") + ": " + nums
	}
	return c
}

// existingParent is the nearest directory above path that exists, where
// a directory the box will create would be made.
func existingParent(path string) string {
	for {
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
}
