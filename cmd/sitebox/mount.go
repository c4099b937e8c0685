package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/mount"
	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// mountFlags are `sitebox mount`'s options.
type mountFlags struct {
	remoteFlags
	readOnly, allowOther, debug           bool
	attr, entry, negative, dirTTL         time.Duration
	dirEntries, maxClients                int
	cacheDir, tempDir, logLevel, cacheRAM string
	revalidate                            time.Duration
	timeout                               time.Duration
	attrSet, entrySet, negativeSet, tSet  bool
}

const mountExamples = `  # The site's federation under /fed, read-only: names and attributes
  # are cached a minute, reads go through the site box's cache.
  sitebox mount -r root://cache.site:1094//store /fed

  # A private cache on local disk, so each byte crosses the WAN once.
  sitebox mount -r --cache-dir /scratch/fedcache roots://origin.example:1094//data /fed

  # Read and write your own area over https with your token
  # ($BEARER_TOKEN_FILE, $XDG_RUNTIME_DIR/bt_u$UID or /tmp/bt_u$UID).
  sitebox mount https://box.site:8443/home/alice ~/fed

  # For every user of a machine (as root): each caller reads with their
  # own token (/run/user/<uid>/bt_u<uid>, /tmp/bt_u<uid>) or X.509 proxy
  # (/tmp/x509up_u<uid>), anonymously without one.
  sitebox mount --allow-other root://box.site:1094// /fed

  # Stop with Ctrl-C, SIGTERM or "umount /fed". After a crash:
  umount -l /fed     # or, as a user: fusermount3 -uz /fed`

func addMountCommand(root *cobra.Command) {
	var f mountFlags
	cmd := &cobra.Command{
		Use:   "mount [flags] URL DIR",
		Short: "Mount a server URL (root://, roots://, https://) as a directory (FUSE), until Ctrl-C or umount",
		Long: `Mount shows the files of a federation server as a local directory, so any
program can read them (and, unless -r, write them: a written file is
uploaded when it is closed, and a failed upload fails the close).

Directories are listed once with every entry's stat and kept for --dir-ttl;
the kernel keeps names and attributes for --entry-timeout and
--attr-timeout (a minute read-only, a second writable). Files carry their
root:// URL in the extended attributes user.xrootd.url, xrootd.url and
eos.url.xroot, for programs that read such files over root:// themselves.

The command stays in the foreground; see docs/mount.md for fstab and
systemd.`,
		Example: mountExamples,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			f.attrSet, f.entrySet, f.negativeSet, f.tSet = fl.Changed("attr-timeout"), fl.Changed("entry-timeout"), fl.Changed("negative-timeout"), fl.Changed("dir-ttl")
			return runMount(&f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	f.remoteFlags.add(cmd)
	fl.BoolVarP(&f.readOnly, "read-only", "r", false, "mount read-only (longer caching: nothing changes through the mount)")
	fl.BoolVar(&f.allowOther, "allow-other", false, "let every user use the mount (as root: each with their own credential)")
	fl.DurationVar(&f.attr, "attr-timeout", 0, "how long the kernel keeps attributes (default 1m read-only, 1s writable; 0 with --allow-other)")
	fl.DurationVar(&f.entry, "entry-timeout", 0, "how long the kernel keeps names (default 1m read-only, 1s writable)")
	fl.DurationVar(&f.negative, "negative-timeout", 0, "how long the kernel keeps \"no such file\" (default 30s read-only, 1s writable)")
	fl.DurationVar(&f.dirTTL, "dir-ttl", 0, "how long a directory listing answers for its names (default 1m read-only, 2s writable)")
	fl.IntVar(&f.dirEntries, "dir-cache-entries", 100_000, "names kept in memory from listings, at most")
	fl.IntVar(&f.maxClients, "max-clients", 64, "with --allow-other as root: server clients kept, one per credential")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "read through a local cache in this directory (each byte crosses the WAN once; with --allow-other, one per credential)")
	fl.StringVar(&f.cacheRAM, "cache-ram", "256MiB", "with --cache-dir: memory for blocks in flight")
	fl.DurationVar(&f.revalidate, "cache-revalidate", 0, "with --cache-dir: how long a cached copy is trusted before its size and mtime are checked (default --dir-ttl)")
	fl.DurationVar(&f.timeout, "timeout", defaultMountTimeout, "how long a request waits for a server that is down or does not answer (reconnecting meanwhile) before it fails with EIO")
	fl.StringVar(&f.tempDir, "temp-dir", os.TempDir(), "where files being written are kept until they are closed")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.BoolVar(&f.debug, "debug", false, "log every FUSE request")
	root.AddCommand(cmd)
}

func runMount(f *mountFlags, rawURL, dir string) error {
	u, err := remote.Parse(rawURL)
	if err != nil {
		return err
	}
	if f.timeout <= 0 {
		return fmt.Errorf("--timeout %v: want a duration above zero (a request must give up on a dead server some time)", f.timeout)
	}
	perCaller := f.allowOther && os.Geteuid() == 0
	if f.allowOther && !perCaller {
		return errors.New("--allow-other needs root: run by a user, the mount would let everyone act with that user's credential")
	}
	var lv slog.LevelVar
	log := newLogger("text", f.logLevel, &lv).With("component", "mount")
	cfg := mount.Config{Dir: dir, Root: u.Path, ReadOnly: f.readOnly, AllowOther: f.allowOther, PerCaller: perCaller,
		DirEntries: f.dirEntries, TempDir: f.tempDir, FsName: sourceName(u), Debug: f.debug, Log: log}
	f.timeouts(&cfg)
	if u.XRootD() {
		cfg.XRootDURL = u.Scheme + "://" + u.Host
	}
	ctx, stop := signalContext()
	defer stop()
	if perCaller {
		base, err := f.baseOptions()
		if err != nil {
			return err
		}
		withCred := func(tok func() string, proxy func() (*x509grid.Credential, error)) remote.Options {
			o := base
			o.TokenFunc, o.Proxy = tok, proxy
			return o
		}
		pc := &mount.PerCaller{MaxClients: f.maxClients,
			Dial: func(tok func() string, proxy func() (*x509grid.Credential, error)) (remote.Client, error) {
				return u.Dial(withCred(tok, proxy))
			}}
		if f.cacheDir != "" {
			pc.Front = func(key string, tok func() string, proxy func() (*x509grid.Credential, error)) (store.Store, io.Closer, error) {
				dir, err := callerCacheDir(f.cacheDir, key)
				if err != nil {
					return nil, nil, err
				}
				return f.startCache(ctx, dir, u, withCred(tok, proxy), cfg.DirTTL, log.With("who", key))
			}
		}
		cfg.Identities = pc
	} else if cfg.Identities, err = f.ownView(ctx, u, cfg.DirTTL, log); err != nil {
		return err
	} else if err := checkRoot(ctx, cfg.Identities, u); err != nil {
		cfg.Identities.Close()
		return err
	}
	m, err := mount.New(cfg)
	if err != nil {
		cfg.Identities.Close()
		return err
	}
	return m.Run(ctx)
}

// checkRoot asks the server about the directory to mount before
// mounting it, so a wrong URL, an unreachable server or a refused
// credential is an error now, not EIO on every access later.
func checkRoot(ctx context.Context, ids mount.Identities, u *remote.URL) error {
	v, err := ids.For(uint32(os.Getuid()))
	if err != nil {
		return err
	}
	fi, err := v.Meta.Stat(ctx, u.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", u.Raw, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is a file, not a directory to mount", u.Raw)
	}
	return nil
}

// timeouts fills the lifetimes: the flags given, else the defaults for
// the kind of mount.
func (f *mountFlags) timeouts(cfg *mount.Config) {
	cfg.AttrTimeout, cfg.EntryTimeout, cfg.NegativeTimeout, cfg.DirTTL = mount.Timeouts(f.readOnly)
	for _, o := range []struct {
		set bool
		val time.Duration
		to  *time.Duration
	}{{f.attrSet, f.attr, &cfg.AttrTimeout}, {f.entrySet, f.entry, &cfg.EntryTimeout}, {f.negativeSet, f.negative, &cfg.NegativeTimeout}, {f.tSet, f.dirTTL, &cfg.DirTTL}} {
		if o.set {
			*o.to = o.val
		}
	}
}

// defaultMountTimeout is --timeout's default: a restarting server is
// back well within it, and a program (ls) learns of a dead one in half
// a minute instead of hanging.
const defaultMountTimeout = 30 * time.Second

// waits bounds every request the mount makes: the client's wait budget
// (kXR_wait, 503 + Retry-After, and reconnecting to a server that
// restarts or fails over, which the mount's clients do) and its wait
// for each answer.
func (f *mountFlags) waits(o *remote.Options) {
	o.Reconnect, o.MaxWait, o.IOTimeout = true, f.timeout, f.timeout
}

// baseOptions are the options every caller's client shares: the CAs
// servers are checked against, and no credential of the mount's own.
func (f *mountFlags) baseOptions() (remote.Options, error) {
	o := remote.Options{CAFile: f.caFile, Insecure: f.insecure}
	f.waits(&o)
	if err := userProxy(&o); err != nil {
		return o, err
	}
	o.Proxy = nil // root's proxy is nobody's credential here
	return o, nil
}

// ownView is the view of a mount for the user running it, with the
// credentials `sitebox get` would use; with --cache-dir, reads go
// through a local cache.Cache in front of the server.
func (f *mountFlags) ownView(ctx context.Context, u *remote.URL, dirTTL time.Duration, log *slog.Logger) (mount.Identities, error) {
	tok, err := bearerToken()
	if err != nil {
		return nil, err
	}
	opts := remote.Options{CAFile: f.caFile, Insecure: f.insecure, Options: outbound.Options{Token: tok}}
	f.waits(&opts)
	if err := userProxy(&opts); err != nil {
		return nil, err
	}
	c, err := u.Dial(opts)
	if err != nil {
		return nil, err
	}
	v := &mount.View{Key: "self", Who: fmt.Sprintf("uid %d", os.Getuid()), Meta: c, Data: c}
	if f.cacheDir == "" {
		return mount.Single{V: v, Closer: c}, nil
	}
	cc, stopCache, err := f.startCache(ctx, f.cacheDir, u, opts, dirTTL, log)
	if err != nil {
		c.Close()
		return nil, err
	}
	v.Data = cc
	return mount.Single{V: v, Closer: closers{stopCache, c}}, nil
}

// sourceName is the URL as mount(8) and df show the mount's source.
func sourceName(u *remote.URL) string {
	if u.XRootD() {
		return u.Scheme + "://" + u.Host + "/" + u.Path
	}
	return u.Scheme + "://" + u.Host + u.Path
}
