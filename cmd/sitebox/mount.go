package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/mount"
	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// mountFlags are `sitebox mount`'s options.
type mountFlags struct {
	remoteFlags
	readOnly, allowOther, debug, noExec   bool
	attr, entry, negative, dirTTL         time.Duration
	dirEntries, maxClients, maxInodes     int
	cacheDir, tempDir, logLevel, cacheRAM string
	smallFiles, smallFilesRAM             string
	revalidate                            time.Duration
	timeout                               time.Duration
	attrSet, entrySet, negativeSet, tSet  bool
	options                               []string // -o lists, mount(8)'s spelling
	protection, logFile                   string
	background                            bool
	level                                 protection // --protection, parsed
}

const mountExamples = `  # The site's federation under /fed, read-only: names and attributes
  # are cached a minute, reads go through the site box's cache.
  sitebox mount -r root://cache.site:1094//store /fed

  # A private cache on local disk, so each byte crosses the WAN once.
  sitebox mount -r --cache-dir /scratch/fedcache roots://origin.example:1094//data /fed

  # Read and write your own area over https with your token
  # ($BEARER_TOKEN_FILE, $XDG_RUNTIME_DIR/bt_u$UID or /tmp/bt_u$UID).
  sitebox mount https://box.site:8443/home/alice ~/fed

  # With your Kerberos tickets (kinit; $KRB5CCNAME FILE: or /tmp/krb5cc_$UID).
  kinit alice@EXAMPLE.ORG && sitebox mount root://box.site:1094//store/user/alice ~/fed

  # For every user of a machine (as root): each caller reads with their
  # own token (/run/user/<uid>/bt_u<uid>, /tmp/bt_u<uid>), X.509 proxy
  # (/tmp/x509up_u<uid>) or Kerberos tickets (/tmp/krb5cc_<uid>),
  # anonymously without one.
  sitebox mount --allow-other root://box.site:1094// /fed

  # As mount(8) does for the fstab line
  #   root://box.site:1094//store /fed fuse.sitebox ro,allow_other,_netdev 0 0
  # (through /sbin/mount.fuse.sitebox): return once mounted, serve
  # on in the background, log to the system log.
  sitebox mount --background -o ro,allow_other root://box.site:1094//store /fed

  # Reads checked end to end: every 4 KiB page against its CRC32C.
  sitebox mount -r --protection integrity root://box.site:1094//store /fed

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

--protection sets how the data is protected on the wire: auth (the
credential is checked; the default), integrity (no altered byte is
served: over root:// and roots:// every page read is checked against
its CRC32C, kXR_pgread; over https:// TLS checks it) or privacy (only
roots:// and https://: TLS for the whole session).

-o takes mount(8)'s options: ro, rw, and each long flag as key=value
with _ for - (allow_other, cache_dir=..., dir_ttl=2m, protection=...);
the ones mount(8) and systemd pass for themselves (_netdev, nofail,
noauto, x-systemd.*, defaults, user, nosuid, ...) are ignored.

The command stays in the foreground unless --background: then it
returns once the filesystem is mounted (or with the error that kept it
from mounting) and serves on in its own session, logging to the system
log (journald) or --log-file, until "umount DIR". mount(8) runs it so
for fstab lines and systemd .mount units of type fuse.sitebox, through
the mount.fuse.sitebox helper; see docs/mount.md.`,
		Example: mountExamples,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if err := applyMountOptions(fl, f.options); err != nil {
				return err
			}
			if f.background {
				dir, err := filepath.Abs(args[1])
				if err != nil {
					return err
				}
				return startBackground(mountChildArgs(fl, args[0], dir))
			}
			f.attrSet, f.entrySet, f.negativeSet, f.tSet = fl.Changed("attr-timeout"), fl.Changed("entry-timeout"), fl.Changed("negative-timeout"), fl.Changed("dir-ttl")
			return runMount(&f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	f.remoteFlags.add(cmd)
	fl.BoolVarP(&f.readOnly, "read-only", "r", false, "mount read-only (longer caching: nothing changes through the mount)")
	fl.BoolVar(&f.noExec, "noexec", false, "programs in the mount cannot be run (mount's noexec)")
	fl.BoolVar(&f.allowOther, "allow-other", false, "let every user use the mount (as root: each with their own credential)")
	fl.DurationVar(&f.attr, "attr-timeout", 0, "how long the kernel keeps attributes (default 1m read-only, 1s writable; 0 with --allow-other)")
	fl.DurationVar(&f.entry, "entry-timeout", 0, "how long the kernel keeps names (default 1m read-only, 1s writable)")
	fl.DurationVar(&f.negative, "negative-timeout", 0, "how long the kernel keeps \"no such file\" (default 30s read-only, 1s writable)")
	fl.DurationVar(&f.dirTTL, "dir-ttl", 0, "how long a directory listing answers for its names (default 1m read-only, 2s writable)")
	fl.IntVar(&f.dirEntries, "dir-cache-entries", 100_000, "names kept in memory from listings, at most")
	fl.IntVar(&f.maxInodes, "max-inodes", 100_000, "names the kernel may hold from the mount; past this it is asked to drop unused ones (bounds memory in a find over millions of files)")
	fl.IntVar(&f.maxClients, "max-clients", 64, "with --allow-other as root: server clients kept, one per credential")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "read through a local cache in this directory (each byte crosses the WAN once; with --allow-other, one per credential)")
	fl.StringVar(&f.cacheRAM, "cache-ram", "256MiB", "with --cache-dir: memory for blocks in flight")
	fl.DurationVar(&f.revalidate, "cache-revalidate", 0, "with --cache-dir: how long a cached copy is trusted before its size and mtime are checked (default --dir-ttl)")
	fl.StringVar(&f.smallFiles, "small-files", "64KiB", "when a file of a directory is opened, read the directory's files of up to this size whole, all at once, so opening them costs no round trip (0: never)")
	fl.StringVar(&f.smallFilesRAM, "small-files-ram", "64MiB", "memory for the small files read whole")
	fl.DurationVar(&f.timeout, "timeout", defaultMountTimeout, "how long a request waits for a server that is down or does not answer (reconnecting meanwhile) before it fails with EIO")
	fl.StringVar(&f.tempDir, "temp-dir", os.TempDir(), "where files being written are kept until they are closed")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.BoolVar(&f.debug, "debug", false, "log every FUSE request")
	fl.StringArrayVarP(&f.options, "options", "o", nil, "mount(8) options, comma-separated: ro, rw, allow_other, protection=..., any long flag as key=value (cache_dir=/var/cache/x)")
	fl.StringVar(&f.protection, "protection", "auth", "data protection on the wire: auth, integrity (checked pages or TLS) or privacy (TLS only)")
	fl.BoolVar(&f.background, "background", false, "return once mounted and serve on in the background (what mount(8) runs)")
	fl.StringVar(&f.logFile, "log-file", "", "append the log to this file (default stderr; in the background, the system log)")
	root.AddCommand(cmd)
}

func runMount(f *mountFlags, rawURL, dir string) error {
	ready := backgroundChild()
	u, err := remote.Parse(rawURL)
	if err != nil {
		return err
	}
	if f.level, err = parseProtection(f.protection); err != nil {
		return err
	}
	if err := f.level.check(u); err != nil {
		return err
	}
	if f.timeout <= 0 {
		return fmt.Errorf("--timeout %v: want a duration above zero (a request must give up on a dead server some time)", f.timeout)
	}
	perCaller := f.allowOther && os.Geteuid() == 0
	if f.allowOther && !perCaller {
		return errors.New("--allow-other needs root: run by a user, the mount would let everyone act with that user's credential")
	}
	if dir, err = f.absPaths(dir); err != nil {
		return err
	}
	var lv slog.LevelVar
	log, logFile, warning, err := f.mountLogger(ready != nil, &lv)
	if err != nil {
		return err
	}
	log = log.With("component", "mount")
	cfg := mount.Config{Dir: dir, Root: u.Path, ReadOnly: f.readOnly, AllowOther: f.allowOther, PerCaller: perCaller,
		DirEntries: f.dirEntries, MaxNodes: f.maxInodes, TempDir: f.tempDir, FsName: sourceName(u), Debug: f.debug, Log: log, NoExec: f.noExec,
		Protection: f.level.what(u)}
	if ready != nil {
		cfg.Ready = func() { detach(ready, logFile, warning) }
	}
	f.timeouts(&cfg)
	if cfg.SmallFiles, cfg.SmallFilesRAM, err = f.smallFileSizes(); err != nil {
		return err
	}
	if u.XRootD() {
		cfg.XRootDURL = u.Scheme + "://" + u.Host
	}
	ctx, stop := signalContext()
	defer stop()
	if perCaller {
		base, err := f.baseOptions(u)
		if err != nil {
			return err
		}
		withCred := func(c mount.Credential) remote.Options {
			o := base
			c.Apply(&o.Options)
			return o
		}
		// Callers' credential caches are used with the machine's
		// krb5.conf (or the one $KRB5_CONFIG names for the mount).
		pc := &mount.PerCaller{MaxClients: f.maxClients, Krb5Conf: outbound.KerberosConfigFile(os.Getenv),
			Dial: func(c mount.Credential) (remote.Client, error) { return u.Dial(withCred(c)) }}
		if f.cacheDir != "" {
			pc.Front = func(key string, c mount.Credential) (store.Store, io.Closer, error) {
				dir, err := callerCacheDir(f.cacheDir, key)
				if err != nil {
					return nil, nil, err
				}
				return f.startCache(ctx, dir, u, withCred(c), cfg.DirTTL, log.With("who", key))
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

// smallFileSizes are --small-files and --small-files-ram.
func (f *mountFlags) smallFileSizes() (file, ram int64, err error) {
	for _, s := range []struct {
		flag, val string
		to        *int64
	}{{"--small-files", f.smallFiles, &file}, {"--small-files-ram", f.smallFilesRAM, &ram}} {
		var size units.Size
		if err := size.UnmarshalText([]byte(s.val)); err != nil || size < 0 {
			return 0, 0, fmt.Errorf("%s %q: want a size like 64KiB (0 for none)", s.flag, s.val)
		}
		*s.to = int64(size)
	}
	return file, ram, nil
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
func (f *mountFlags) baseOptions(u *remote.URL) (remote.Options, error) {
	o := remote.Options{CAFile: f.caFile, Insecure: f.insecure, PageChecks: f.level.pageChecks(u)}
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
	opts := remote.Options{CAFile: f.caFile, Insecure: f.insecure, Options: outbound.Options{Token: tok}, PageChecks: f.level.pageChecks(u)}
	f.waits(&opts)
	if err := userProxy(&opts); err != nil {
		return nil, err
	}
	userKerberos(&opts.Options)
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

// absPaths makes the paths the mount uses after it has started
// absolute, since a background mount serves from / (see detach); dir
// is the mount point's.
func (f *mountFlags) absPaths(dir string) (string, error) {
	for _, p := range []*string{&dir, &f.cacheDir, &f.tempDir, &f.logFile, &f.caFile} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return "", err
		}
		*p = abs
	}
	return dir, nil
}

// sourceName is the URL as mount(8) and df show the mount's source.
func sourceName(u *remote.URL) string {
	if u.XRootD() {
		return u.Scheme + "://" + u.Host + "/" + u.Path
	}
	return u.Scheme + "://" + u.Host + u.Path
}
