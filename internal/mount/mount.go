package mount

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// ioSize is the size of FUSE read and write requests: 1 MiB, the
// cache's block, so one request is one block fetched (the kernel's
// 128 KiB default costs eight round trips each).
const ioSize = 1 << 20

// readAhead is the kernel's read-ahead window for the mount: 8 MiB, so a
// sequential reader has up to eight 1 MiB requests in flight to the
// mount. With a window of one request the kernel asked for the next MiB
// only once the reader had taken the last: every request's trip through
// the kernel and the mount (milliseconds on a busy machine) left the
// link idle, and a read through the mount ran at half xrdcp's rate at
// 10–25 ms round trips. The requests of one window are served in
// parallel, so they reach the cache slightly out of order; the cache's
// stream detection allows for that (cache.reorderBlocks). Reads with
// read(2) at scattered offsets are sent as asked; a program faulting in
// an mmap'ed file at random is read around each fault by the window
// until the kernel, after a hundred misses, stops reading around.
const readAhead = 8 << 20

// maxBackground is how many read-ahead requests the kernel keeps in
// flight to the mount, over all files (FUSE's max_background; go-fuse's
// default is 12): several streams' windows.
const maxBackground = 4 * readAhead / ioSize

// Config describes one mount.
type Config struct {
	Dir  string // the mount point, an existing directory
	Root string // the server path the mount's root shows ("/" for all)
	// XRootDURL is "root://host:port" (or roots://) when the server
	// speaks XRootD: files then carry their root:// URL as the extended
	// attributes ROOT looks for, to read them with vector reads over
	// root:// instead of through the kernel.
	XRootDURL  string
	Identities Identities
	ReadOnly   bool
	// AllowOther lets every user of the machine use the mount (the FUSE
	// allow_other option).
	AllowOther bool
	// PerCaller says callers have views of their own: the kernel is then
	// told to cache no name and no attribute, so every access is asked
	// of the mount with the caller's uid.
	PerCaller bool
	// Kernel lifetimes of names, attributes and "no such file" answers.
	AttrTimeout, EntryTimeout, NegativeTimeout time.Duration
	// DirTTL is how long a listing answers for its directory's names;
	// DirEntries caps the names kept in memory.
	DirTTL     time.Duration
	DirEntries int
	// SmallFiles is the size up to which the files of a directory are
	// read whole, in parallel, when the first of them is opened, so that
	// opening the others costs no round trip (0: never); SmallFilesRAM bounds the memory
	// they are kept in.
	SmallFiles, SmallFilesRAM int64
	// MaxNodes is how many names the kernel may hold at once before the
	// mount asks it to drop unused ones (memory for a find over a
	// million files).
	MaxNodes int
	// TempDir holds the local copies of files being written.
	TempDir string
	FsName  string // shown by mount(8) and df as the source
	Debug   bool   // log every FUSE request
	Log     *slog.Logger
	// NoExec mounts with noexec: programs in the mount cannot be run
	// (the mount is nosuid and nodev always).
	NoExec bool
	// Protection names the mount's protection level for its log line
	// (how the clients keep it is theirs to do).
	Protection string
	// Ready, when set, is called once the filesystem is mounted, before
	// it is served on: a mount run in the background tells the command
	// that started it that it may return.
	Ready func()
}

// zeroOpens says whether opens may cost no request (see inodeFiles): a
// read-only mount where every caller is the mount's user.
func (c *Config) zeroOpens() bool { return c.ReadOnly && !c.PerCaller && !c.AllowOther }

// Timeouts are the defaults for the kernel's and the mount's caches: a
// minute where nothing changes through the mount, a second where it
// may (other writers, other clients of the server, are seen that late).
func Timeouts(readOnly bool) (attr, entry, negative, dirTTL time.Duration) {
	if readOnly {
		return time.Minute, time.Minute, 30 * time.Second, time.Minute
	}
	return time.Second, time.Second, time.Second, 2 * time.Second
}

// Mount is a mounted filesystem; Run serves it.
type Mount struct {
	cfg Config
	fs  *fsys
}

// New checks cfg; nothing is mounted before Run.
func New(cfg Config) (*Mount, error) {
	st, err := os.Stat(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("mount point: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("mount point %s is not a directory", cfg.Dir)
	}
	if cfg.Identities == nil {
		return nil, errors.New("mount: no identities configured")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if cfg.DirEntries <= 0 {
		cfg.DirEntries = 100_000
	}
	if cfg.MaxNodes <= 0 {
		cfg.MaxNodes = defaultMaxNodes
	}
	if cfg.PerCaller {
		cfg.AttrTimeout, cfg.EntryTimeout, cfg.NegativeTimeout = 0, 0, 0
	}
	return &Mount{cfg: cfg, fs: newFsys(cfg)}, nil
}

func (m *Mount) options() *fuse.MountOptions {
	opts := &fuse.MountOptions{
		FsName:        m.cfg.FsName,
		Name:          "sitebox",
		AllowOther:    m.cfg.AllowOther,
		MaxWrite:      ioSize,
		MaxReadAhead:  ioSize,
		MaxBackground: maxBackground,
		// Root mounts with mount(2) itself; other users through
		// fusermount3 (package fuse3), which the kernel requires.
		DirectMount: true,
		// O_TRUNC arrives with the open, so a file opened to be
		// replaced is not fetched first.
		ExtraCapabilities:    fuse.CAP_ATOMIC_O_TRUNC,
		IgnoreSecurityLabels: true,
		// Replies carry bytes in memory, never a file to splice from:
		// go-fuse would still try a pipe for each READ (a pipe from its
		// pool, resized, the header written and drained again: four
		// system calls), and for a 1 MiB one fail and log the failure.
		DisableSplice: true,
		Debug:         m.cfg.Debug,
		Logger:        log.New(os.Stderr, "fuse: ", 0),
	}
	if m.cfg.NoExec {
		opts.Options = append(opts.Options, "noexec") // a flag of mount(2) or fusermount3's option
	}
	if m.cfg.ReadOnly {
		opts.Options = append(opts.Options, "ro")
		opts.DirectMountFlags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_RDONLY
	}
	return opts
}

// Run mounts the filesystem and serves it until ctx ends (then it
// unmounts) or the mount goes away (`umount DIR`, `fusermount3 -u
// DIR`). Should the process be killed instead, the kernel fails every
// access with ENOTCONN until `umount -l DIR` (or `fusermount3 -uz DIR`)
// removes the dead mount; nothing hangs.
func (m *Mount) Run(ctx context.Context) error {
	defer m.cfg.Identities.Close()
	server, err := fuse.NewServer(m.fs, m.cfg.Dir, m.options())
	if err != nil {
		return fmt.Errorf("mount %s: %w", m.cfg.Dir, err)
	}
	done := make(chan struct{})
	go func() {
		server.Serve()
		close(done)
	}()
	if err := server.WaitMount(); err != nil {
		server.Unmount()
		<-done
		return fmt.Errorf("mount %s: %w", m.cfg.Dir, err)
	}
	// The mount's own work (small files read ahead, kernel names
	// pruned) runs while it is mounted.
	workCtx, stopWork := context.WithCancel(ctx)
	var work sync.WaitGroup
	prune := &pruner{nodes: m.fs.nodes, max: m.cfg.MaxNodes, srv: server, log: m.cfg.Log}
	for _, run := range []func(context.Context){m.fs.small.run, prune.run} {
		work.Add(1)
		go func() {
			defer work.Done()
			run(workCtx)
		}()
	}
	defer func() {
		stopWork()
		work.Wait()
	}()
	if m.cfg.zeroOpens() && server.KernelSettings().Flags64()&fuse.CAP_NO_OPEN_SUPPORT != 0 {
		m.fs.zeroOpen.Store(true)
	}
	if err := setReadAhead(m.cfg.Dir, readAhead); err != nil {
		m.cfg.Log.Debug("kernel read-ahead left as it was", "err", err.Error())
	}
	m.cfg.Log.Info("mounted", "dir", m.cfg.Dir, "source", m.cfg.FsName, "read_only", m.cfg.ReadOnly, "per_caller", m.cfg.PerCaller, "zero_message_opens", m.fs.zeroOpen.Load(), "protection", m.cfg.Protection)
	if m.cfg.Ready != nil {
		m.cfg.Ready()
	}
	select {
	case <-done:
		m.cfg.Log.Info("unmounted", "dir", m.cfg.Dir)
	case <-ctx.Done():
		m.unmount(server, done)
	}
	m.fs.closeAll()
	return nil
}

// unmount takes the mount away; when files in it are still open it
// detaches it (umount -l), so the name is free at once and the
// filesystem ends when the last file closes, or when the process exits.
func (m *Mount) unmount(server *fuse.Server, done <-chan struct{}) {
	err := server.Unmount()
	if err == nil {
		<-done
		m.cfg.Log.Info("unmounted", "dir", m.cfg.Dir)
		return
	}
	m.cfg.Log.Warn("mount busy; detaching it (umount -l)", "dir", m.cfg.Dir, "err", err.Error())
	if err := syscall.Unmount(m.cfg.Dir, syscall.MNT_DETACH); err != nil {
		if out, err := exec.Command("fusermount3", "-uz", m.cfg.Dir).CombinedOutput(); err != nil {
			m.cfg.Log.Error("cannot detach the mount", "dir", m.cfg.Dir, "err", err.Error(), "output", string(out))
			return
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		// Files still open in the detached mount fail once we exit.
	}
}

// fsys is the FUSE filesystem.
type fsys struct {
	fuse.RawFileSystem // ENOSYS for what is not implemented
	cfg                Config
	log                *slog.Logger
	nodes              *nodes
	dirs               *dirCache
	small              *smallFiles
	// inodes are the files read without a handle, once the kernel
	// sends no opens (zeroOpen: a read-only mount of one user, on a
	// kernel that does zero-message opens).
	inodes   *inodeFiles
	zeroOpen atomic.Bool

	mu      sync.Mutex
	handles map[uint64]handle
	nextFh  uint64
	writers map[uint64]*writeFile // by inode: open for writing
}

func newFsys(cfg Config) *fsys {
	return &fsys{
		RawFileSystem: fuse.NewDefaultRawFileSystem(),
		cfg:           cfg,
		log:           cfg.Log,
		nodes:         newNodes(cfg.MaxNodes),
		dirs:          newDirCache(cfg.DirTTL, cfg.DirEntries),
		small:         newSmallFiles(cfg.SmallFiles, cfg.SmallFilesRAM, cfg.Log),
		inodes:        newInodeFiles(maxInodeFiles),
		handles:       map[uint64]handle{},
		nextFh:        1,
		writers:       map[uint64]*writeFile{},
	}
}

func (m *fsys) String() string { return "sitebox:" + m.cfg.FsName }

// storePath is the server path of a path below the mount's root.
func (m *fsys) storePath(rel string) string { return path.Join(m.cfg.Root, rel) }

// handle is an open file or directory.
type handle interface {
	release()
}

func (m *fsys) addHandle(h handle) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	fh := m.nextFh
	m.nextFh++
	m.handles[fh] = h
	return fh
}

func (m *fsys) handle(fh uint64) handle {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.handles[fh]
}

func (m *fsys) dropHandle(fh uint64) handle {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.handles[fh]
	delete(m.handles, fh)
	return h
}

// closeAll releases what the kernel did not (a mount taken away with
// files open).
func (m *fsys) closeAll() {
	m.mu.Lock()
	hs := m.handles
	m.handles = map[uint64]handle{}
	m.mu.Unlock()
	for _, h := range hs {
		h.release()
	}
	m.inodes.closeAll()
}

// reqCtx is a context ended when the kernel interrupts the request.
func reqCtx(cancel <-chan struct{}) context.Context {
	return cancelCtx{Context: context.Background(), c: cancel}
}

type cancelCtx struct {
	context.Context
	c <-chan struct{}
}

func (c cancelCtx) Done() <-chan struct{} { return c.c }

func (c cancelCtx) Err() error {
	select {
	case <-c.c:
		return context.Canceled
	default:
		return nil
	}
}
