package bench

import (
	"context"
	"fmt"
	"time"

	"sitebox/test/peers"
)

// runSetup measures every workload of one setup at the link's current
// round trip time, each workload on a mount of its own made afresh, so
// "cold" is an empty cache and nothing in the kernel's caches either.
// A failed workload is recorded and the next one runs.
func (e *mountEnv) runSetup(ctx context.Context, k mountKind, d *mountData) MountPoint {
	setup := k.setup
	p := MountPoint{Setup: setup, Protection: k.protection, Uproot: map[int]float64{}}
	if (setup == "sitebox" || setup == siteboxCacheSetup) && e.noSitebox != "" {
		p.Unavailable = e.noSitebox
		return p
	}
	fail := func(what string, err error) {
		if err != nil {
			p.Errs = append(p.Errs, what+": "+err.Error())
		}
	}
	if setup == "root" || setup == rootCacheSetup {
		e.runRootClients(ctx, setup, d, &p, fail)
		return p
	}
	if e.cfg.does("build") {
		fail("build", e.withMount(ctx, k, func(root string) error {
			var err error
			if p.BuildCold, err = d.build(ctx, e.cfg, root); err != nil {
				return fmt.Errorf("cold: %w", err)
			}
			p.BuildWarm, err = d.warmBuilds(ctx, e.cfg, root)
			return err
		}))
	}
	if e.cfg.does("sweep") {
		fail("sweep", e.withMount(ctx, k, func(root string) error {
			var err error
			if p.SweepCold, p.SweepNote, err = d.sweep(root); err != nil {
				return fmt.Errorf("cold: %w", err)
			}
			p.SweepWarm, _, err = d.sweep(root)
			return err
		}))
	}
	if e.cfg.does("seq") || e.cfg.does("fio") {
		fail("read", e.withMount(ctx, k, func(root string) error {
			if e.cfg.does("seq") {
				mbps, err := readRate(ctx, root+"/"+d.big)
				if err != nil {
					return fmt.Errorf("sequential: %w", err)
				}
				p.SeqMBps = mbps
			}
			if e.cfg.does("fio") {
				iops, err := fioRandRead(ctx, root+"/"+d.fio, e.cfg.FioTime)
				if err != nil {
					return fmt.Errorf("fio: %w", err)
				}
				p.FioIOPS = iops
			}
			return nil
		}))
	}
	if e.cfg.does("uproot") {
		fail("uproot", e.withMount(ctx, k, func(root string) error {
			return e.uprootReaders(ctx, root, d, &p)
		}))
	}
	e.runMetaAndWrites(ctx, k, &p, fail)
	return p
}

// runMetaAndWrites measures the workloads that are not reads of the
// tree: find over many names, and fio writing on a writable mount.
func (e *mountEnv) runMetaAndWrites(ctx context.Context, k mountKind, p *MountPoint, fail func(string, error)) {
	if e.cfg.does("find") && findSetup(k.setup) {
		fail("find", e.runFind(ctx, k, p))
	}
	if e.cfg.does("fiorw") {
		w := k
		w.writable = true
		fail("fiorw", e.withMount(ctx, w, func(root string) error {
			var err error
			p.RW, err = fioReadWrite(ctx, root, e.cfg.FioSize, e.cfg.FioTime)
			return err
		}))
	}
}

// withMount runs f on a fresh mount of k, unmounting on every path.
func (e *mountEnv) withMount(ctx context.Context, k mountKind, f func(root string) error) error {
	return e.withMountProc(ctx, k, func(root string, _ *peers.FuseMount) error { return f(root) })
}

// withMountProc is withMount giving f the mount's process too (nil for
// local disk).
func (e *mountEnv) withMountProc(ctx context.Context, k mountKind, f func(root string, m *peers.FuseMount) error) error {
	setup := k.setup
	root, m, unmount, err := e.mountSetup(ctx, k, e.cfg.dataDir())
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	defer unmount()
	t0 := time.Now()
	err = f(root, m)
	fmt.Fprintf(e.cfg.Out, "  %s mount used for %v\n", setup, time.Since(t0).Round(time.Millisecond))
	return err
}
