package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"sitebox/internal/config"
)

// checkWritable writes a file in every directory the box writes to: a
// read-only mount, a wrong owner or a full inode table shows here, not
// at the first upload. A directory the box makes itself is checked at its
// nearest existing parent.
func checkWritable(_ context.Context, cfg *config.Config, o *Options) []Check {
	type dir struct{ path, role, effect string }
	var dirs []dir
	if cfg.Server.StateDir != "" {
		dirs = append(dirs, dir{cfg.Server.StateDir, "state dir", "the box cannot keep its keys, certificates and job queue, and does not start"})
	}
	if cfg.Cache.Dir != "" {
		dirs = append(dirs, dir{cfg.Cache.Dir, "cache dir", "the cache keeps nothing and every read goes upstream"})
	}
	if cfg.Jobs.Enabled && cfg.Jobs.Dir != "" {
		dirs = append(dirs, dir{cfg.Jobs.Dir, "jobs dir", "job sandboxes cannot be made and jobs fail to start"})
	}
	for _, e := range cfg.Exports {
		if e.ReadOnly {
			continue
		}
		for _, p := range e.Pools {
			dirs = append(dirs, dir{p, "export " + e.Prefix + " pool", "uploads to " + e.Prefix + " fail"})
		}
	}
	if len(dirs) == 0 {
		return []Check{{Name: "directories", Status: StatusSkip, Summary: "no directories configured"}}
	}
	var out []Check
	for _, d := range dirs {
		c := Check{Name: d.role + " " + d.path}
		at := d.path
		for {
			if _, err := os.Stat(at); !errors.Is(err, os.ErrNotExist) || filepath.Dir(at) == at {
				break
			}
			at = filepath.Dir(at)
		}
		if err := o.WriteProbe(at); err != nil {
			c.Status, c.Summary = StatusError, "cannot write in "+at+": "+shortErr(err)
			c.Explain = "If this is so for the box's user too, " + d.effect + "."
			c.Fix = "Make it writable by the box's user (`chown -R sitebox: " + at + "`; a read-only mount: remount it rw, e.g. in /etc/fstab; under systemd also ReadWritePaths=)."
		} else if at != d.path {
			c.Status, c.Summary = StatusOK, "not there yet; the box can make it in "+at
		} else {
			c.Status, c.Summary = StatusOK, "writable"
		}
		out = append(out, c)
	}
	return out
}

// writeProbe creates and removes a file in dir.
func writeProbe(dir string) error {
	f, err := os.CreateTemp(dir, ".sitebox-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
