package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"sitebox/test/peers"
)

// The setups that read through a sitebox cache box instead of straight
// from the origin: the mount's sequential-read target is stated against
// xrdcp "through the same cache", which these two measure side by side.
// Each measurement gets a cache box of its own, started empty, so every
// read is cold.
const (
	// siteboxCacheSetup is `sitebox mount` (no --cache-dir) of the cache
	// box's root:// URL.
	siteboxCacheSetup = "sitebox-cache"
	// rootCacheSetup is xrdcp (and uproot over root://) through the
	// cache box: the baseline of siteboxCacheSetup.
	rootCacheSetup = "root-cache"
)

// viaCacheBox says whether setup reads through a cache box.
func viaCacheBox(setup string) bool { return setup == siteboxCacheSetup || setup == rootCacheSetup }

// baselineSetup is the root:// setup a mount's MB/s are compared with:
// xrdcp through the same cache box for a mount of it, else from the
// origin.
func baselineSetup(setup string) string {
	if setup == siteboxCacheSetup {
		return rootCacheSetup
	}
	return "root"
}

// startCacheBox starts `sitebox serve` with the cache role and an empty
// cache, in front of the origin over the shaped link, and returns its
// /store as a root:// URL and how to stop it (and remove its blocks).
func (e *mountEnv) startCacheBox(ctx context.Context) (string, func(), error) {
	e.mountCount++
	dir := filepath.Join(e.cfg.WorkDir, "cache-box", strconv.Itoa(e.mountCount))
	ce := &cacheEnv{cfg: &CacheConfig{
		Sitebox: e.cfg.Sitebox,
		RAM:     1 << 30, // the box's default
		// Room for everything a run reads, so nothing is purged.
		Disk: max(4*(e.cfg.SeqSize+e.cfg.FioSize), 1<<30),
	}}
	t, err := ce.startSitebox(ctx, e.root.Addr, dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return "root://" + t.host + "//store", func() {
		t.proc.Stop()
		os.RemoveAll(dir)
	}, nil
}

// withCacheBox runs f with the /store URL of a fresh cache box.
func (e *mountEnv) withCacheBox(ctx context.Context, f func(url string) error) error {
	url, stop, err := e.startCacheBox(ctx)
	if err != nil {
		return fmt.Errorf("cache box: %w", err)
	}
	defer stop()
	return f(url)
}

// runRootClients measures the mountless setups (root, root-cache): xrdcp
// of the large file and uproot with root:// URLs, from the origin or
// through a fresh cache box for each.
func (e *mountEnv) runRootClients(ctx context.Context, setup string, d *mountData, p *MountPoint, fail func(string, error)) {
	through := func(f func(url string) error) error {
		if setup == rootCacheSetup {
			return e.withCacheBox(ctx, f)
		}
		return f(e.rootURL())
	}
	if e.cfg.does("seq") {
		fail("xrdcp", through(func(url string) error {
			var err error
			p.SeqMBps, err = xrdcpRate(ctx, url+"/"+d.big, e.cfg.SeqSize)
			return err
		}))
	}
	if e.cfg.does("uproot") {
		fail("uproot", through(func(url string) error { return e.uprootReaders(ctx, url, d, p) }))
	}
}

// mountCacheBox starts a fresh cache box and mounts its /store on dir
// with `sitebox mount` and no cache of the mount's own; the function
// returned stops the box once the mount is gone.
func (e *mountEnv) mountCacheBox(ctx context.Context, dir string, k mountKind) (*peers.FuseMount, func(), error) {
	url, stop, err := e.startCacheBox(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("cache box: %w", err)
	}
	m, err := peers.StartFuseMount(ctx, "sitebox mount", siteboxMountCmd(e.cfg.Sitebox, url, dir, "", e.caFile, k), dir)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return m, stop, nil
}
