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

// mountEnv is what every point of the mount bench shares: the origin box
// and the Toxiproxy links to its root:// and https:// ports.
type mountEnv struct {
	cfg        *MountConfig
	box        *peers.Process
	tp         *peers.Toxiproxy
	root, dav  *peers.Link
	mounts     string // where the mount points are made
	caFile     string // the origin's TLS certificate, for roots://
	noSitebox  string // why `sitebox mount` cannot run, if it cannot
	mountCount int    // makes every mount point and cache directory fresh
}

func startMountEnv(ctx context.Context, cfg *MountConfig, data string) (_ *mountEnv, err error) {
	e := &mountEnv{cfg: cfg, mounts: filepath.Join(cfg.WorkDir, "mnt")}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	e.noSitebox = siteboxMountMissing(ctx, cfg.Sitebox)
	rp, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	hp, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	state := filepath.Join(cfg.WorkDir, "origin-state")
	e.caFile = filepath.Join(state, "tls", "cert.pem")
	e.box, err = peers.StartSitebox(ctx, cfg.Sitebox, []int{rp, hp}, "serve", "--export", "/store="+data,
		"--root-addr", "127.0.0.1:"+strconv.Itoa(rp), "--https-addr", "127.0.0.1:"+strconv.Itoa(hp),
		"--state-dir", state, "--log-level", "warn")
	if err != nil {
		return nil, fmt.Errorf("start the sitebox origin: %w", err)
	}
	bin, err := peers.ToxiproxyBinary()
	if err != nil {
		return nil, err
	}
	if e.tp, err = peers.StartToxiproxy(ctx, bin); err != nil {
		return nil, err
	}
	if e.root, err = e.tp.Proxy(ctx, "mountroot", "127.0.0.1:"+strconv.Itoa(rp)); err != nil {
		return nil, err
	}
	if e.dav, err = e.tp.Proxy(ctx, "mountdav", "127.0.0.1:"+strconv.Itoa(hp)); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *mountEnv) stop() {
	if e.tp != nil {
		e.tp.Stop()
	}
	e.box.Stop()
}

// setRTT makes both links add rtt to every round trip: half of it each
// way, the odd millisecond (25 ms) on the way back, as Toxiproxy's
// latencies are whole milliseconds.
func (e *mountEnv) setRTT(ctx context.Context, rtt time.Duration) error {
	up := (rtt / 2).Truncate(time.Millisecond)
	for _, l := range []*peers.Link{e.root, e.dav} {
		for stream, d := range map[string]time.Duration{"upstream": up, "downstream": rtt - up} {
			name := "latency_" + stream
			_ = l.RemoveToxic(ctx, name) // absent the first time
			if d == 0 {
				continue
			}
			t := peers.Toxic{Name: name, Type: "latency", Stream: stream, Attributes: map[string]any{"latency": d.Milliseconds()}}
			if err := l.AddToxic(ctx, t); err != nil {
				return fmt.Errorf("set the link's latency: %w", err)
			}
		}
	}
	return nil
}

// rootURL is the origin's /store over the shaped link.
func (e *mountEnv) rootURL() string { return "root://" + e.root.Addr + "//store" }

// mountKind is what a setup's mount is made for: the setup, the sitebox
// setup's protection level, and whether it is written to (fiorw).
type mountKind struct {
	setup, protection string
	writable          bool
}

// siteboxMountCmd is the command line of `sitebox mount`: the one place
// to adapt when its flags change. It mounts the origin's /store from url
// on dir, caching in cacheDir (none if ""), in the foreground until unmounted, at the
// protection level k names; read-only unless k is writable, as a build
// or an analysis reads a federation (and with its longer attribute
// caching). ca is the origin's certificate, for roots://.
func siteboxMountCmd(bin, url, dir, cacheDir, ca string, k mountKind) *exec.Cmd {
	args := []string{"mount"}
	if cacheDir != "" {
		args = append(args, "--cache-dir", cacheDir)
	}
	if !k.writable {
		args = append(args, "-r")
	}
	if k.protection != "" {
		args = append(args, "--protection", k.protection, "--ca", ca)
	}
	return exec.Command(bin, append(args, url+"/", dir)...)
}

// siteboxURL is the origin's /store over the shaped link as the sitebox
// setup at level reaches it: over roots:// for privacy.
func (e *mountEnv) siteboxURL(level string) string {
	if level == "privacy" {
		return "roots://" + e.root.Addr + "//store"
	}
	return e.rootURL()
}

// siteboxMountMissing says why the binary cannot mount ("" if it can):
// the benchmark reports that setup as not available and runs the others.
func siteboxMountMissing(ctx context.Context, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "mount", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mount") || strings.Contains(string(out), "unknown command") {
		return bin + " has no `mount` command"
	}
	return ""
}

// mountSetup mounts setup afresh (a new mount point, an empty cache) and
// returns the directory that holds the origin's /store, the mount, and
// how to unmount it. Local disk is the origin's directory itself (no
// mount).
func (e *mountEnv) mountSetup(ctx context.Context, k mountKind, data string) (string, *peers.FuseMount, func(), error) {
	setup := k.setup
	if setup == "local" {
		return data, nil, func() {}, nil
	}
	e.mountCount++
	dir := filepath.Join(e.mounts, fmt.Sprintf("%s-%d", setup, e.mountCount))
	cache := filepath.Join(e.cfg.WorkDir, "mount-cache", fmt.Sprintf("%s-%d", setup, e.mountCount))
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", nil, nil, err
	}
	var m *peers.FuseMount
	var err error
	stopBox := func() {}
	switch setup {
	case "sitebox":
		m, err = peers.StartFuseMount(ctx, "sitebox mount", siteboxMountCmd(e.cfg.Sitebox, e.siteboxURL(k.protection), dir, cache, e.caFile, k), dir)
	case siteboxCacheSetup:
		m, stopBox, err = e.mountCacheBox(ctx, dir, k)
	case "xrootdfs":
		m, err = peers.StartXrootdfs(ctx, e.rootURL()+"/", dir)
	case "rclone":
		m, err = peers.StartRcloneWebDAV(ctx, "https://"+e.dav.Addr+"/store", dir, peers.RcloneOptions{CacheDir: cache})
	default:
		return "", nil, nil, fmt.Errorf("setup %q has no mount", setup)
	}
	if err != nil {
		os.RemoveAll(cache)
		return "", nil, nil, err
	}
	return dir, m, func() {
		if err := m.Unmount(); err != nil {
			fmt.Fprintf(e.cfg.Out, "  unmount %s: %v\n", dir, err)
		}
		stopBox()
		os.Remove(dir)
		os.RemoveAll(cache)
	}, nil
}
