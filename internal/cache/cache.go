package cache

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/disk"
	"sitebox/internal/cache/index"
	"sitebox/internal/cache/upstream"
	"sitebox/internal/cksum"
	"sitebox/internal/dio"
	"sitebox/internal/store"
)

// Cache is a read-only store.Store that serves its routes' upstreams
// through the local block cache. Safe for concurrent use.
type Cache struct {
	cfg    Config
	log    *slog.Logger
	disk   *disk.Dir
	ups    *upstream.Set // the routes to upstream servers
	budget *budget
	keep   keeper // blocks kept in RAM for their readers (keep.go)
	writeQ chan writeJob
	ctr    counters

	blockPool sync.Pool // buffers for checking partially read disk blocks

	ctx     context.Context // ends at Close: stops fetches and prefetches
	cancel  context.CancelFunc
	runMu   sync.Mutex // orders Run's start against Close
	running bool       // Run has started the background work
	closed  atomic.Bool
	wg      sync.WaitGroup // writers
	bg      sync.WaitGroup // flusher, purger

	mu      sync.Mutex
	entries map[string]*entry // the files in use or used in the last UpstreamIdle
	idx     *index.Index      // every other cached file, in a compact record
	idle    idleHandles       // entries whose upstream handles no one uses

	withData entrySet         // entries with an open data file, for the flusher
	touched  entrySet         // entries whose last access waits for the flusher to save it
	subs     *blockmap.Keeper // bounds the 4 KiB CRCs kept with checked pages

	purgeCh chan struct{}
	scanned chan struct{} // closed when the start-up scan has registered every cached file
	// purgeMu makes purge passes (the purger's, and tests' direct calls)
	// one at a time; it guards purgeShort: the last purge could not reach
	// the low marks.
	purgeMu           sync.Mutex
	purgeShort        bool
	writtenSinceCheck atomic.Int64
}

var _ store.Store = (*Cache)(nil)

// subsBudget is the memory the 4 KiB CRCs kept with checked pages may
// take (blockmap.Keeper): 8,192 chunks of 64 pages of 32 KiB, the CRCs
// of 16 GiB of checked pages.
const subsBudget = 16 << 20

// New opens the cache directory. Run starts the disk writers, the
// flusher, the purger and the scan that registers what the cache holds.
func New(cfg Config, log *slog.Logger) (*Cache, error) {
	if err := cfg.prepare(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// O_DIRECT writes pay off for big blocks, which streaming readers fill
	// (less CPU per byte); small blocks serve scattered reads, whose pages
	// are best written where the next read finds them, the page cache.
	d, err := disk.Open(cfg.Dir, !cfg.PageCache && cfg.BlockSize.Bytes() >= 1<<20, cfg.DiskRetry, log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		cfg:     cfg,
		log:     log,
		disk:    d,
		budget:  newBudget(cfg.RAM.Bytes(), cfg.BlockSize.Bytes()),
		writeQ:  make(chan writeJob, max(cfg.RAM.Bytes()/min(cfg.BlockSize.Bytes(), blockmap.CheckPage)/2, 1)), // a job per fetch, a page or more
		ctx:     ctx,
		cancel:  cancel,
		entries: map[string]*entry{},
		idx:     index.New(),
		purgeCh: make(chan struct{}, 1),
		scanned: make(chan struct{}),
		subs:    blockmap.NewKeeper(subsBudget),
	}
	c.ups = upstream.NewSet(ctx, upstream.Options{FetchTimeout: cfg.FetchTimeout, Files: cfg.UpstreamFiles, Trim: c.trimHandles, Log: log})
	for _, r := range cfg.Routes {
		c.ups.Add(r.Prefix, r.Upstreams)
	}
	c.keep.limit = cfg.RAM.Bytes() / keepShare
	c.blockPool.New = func() any { b := dio.Buf(cfg.BlockSize.Bytes()); return &b }
	d.OnFull(func() { c.kickPurge(-1) })
	log.Info("cache ready; reading the block maps of cached files in the background", "dir", cfg.Dir, "block_size", cfg.BlockSize.Bytes(), "ram", cfg.RAM.Bytes())
	return c, nil
}

// Close stops background work, saves every block map and closes files.
func (c *Cache) Close() error {
	c.runMu.Lock()
	closed := c.closed.Swap(true)
	c.runMu.Unlock()
	if closed {
		return nil
	}
	c.cancel()
	c.bg.Wait()
	// Fetches still running fail fast now that ctx is done; wait for them
	// to hand their blocks to the writers, then drain the writers.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c.busyFetches() == 0 {
			break
		}
	}
	close(c.writeQ)
	c.wg.Wait()
	c.mu.Lock()
	es := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		es = append(es, e)
	}
	c.mu.Unlock()
	for _, e := range es {
		e.flush()
		e.closeData()
		e.up.CloseAll(nil)
	}
	c.ups.Close()
	return c.disk.Close()
}

func (c *Cache) busyFetches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.entries {
		e.mu.Lock()
		n += len(e.inflight)
		e.mu.Unlock()
	}
	return n
}

// Prefixes lists the cached namespace prefixes.
func (c *Cache) Prefixes() []string {
	return c.ups.Prefixes()
}

// entryFor returns the entry for p with a reference held.
func (c *Cache) entryFor(p string, r *upstream.Route) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[p]
	if e == nil {
		// An idle cached file leaves the index: its entry loads the
		// block map from disk (validate, loadEntryMap) and returns to
		// the index once idle again.
		e = &entry{c: c, path: p}
		e.data = c.disk.Data(p, func() { c.withData.add(e) })
		e.up = r.File(p, e.wanted)
		if rc := c.idx.Get(p); rc != nil {
			if bits := c.idx.Checked(rc); bits != nil {
				e.carried = &carriedChecks{size: rc.Size, mtime: rc.MTime, bits: bits}
			}
			c.idx.Remove(rc)
		}
		c.entries[p] = e
	}
	e.refs++
	return e
}

// Open opens a file for reading through the cache. The cached copy is
// checked against the upstream's size and mtime when it is older than the
// revalidation interval; a changed file is dropped and cached afresh.
func (c *Cache) Open(ctx context.Context, name string) (store.File, error) {
	p, r, err := c.routeOf(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	e := c.entryFor(p, r)
	if vo := store.RequestFrom(ctx).ClientVO(); vo != "" {
		e.mu.Lock()
		e.vo = vo // the VO that reaches the file, for fetches later
		e.mu.Unlock()
	}
	if err := c.validate(ctx, e); err != nil {
		c.release(e)
		return nil, err
	}
	c.mu.Lock()
	e.opens++
	c.markBusyLocked(e)
	c.mu.Unlock()
	e.touch(time.Now())
	f := &File{e: e, c: c}
	if c.cfg.Prefetch {
		c.prefetch(e)
	} else {
		c.preopen(e, preopenFirst)
	}
	return f, nil
}

// Stat answers from the cached copy while it is fresh, else upstream.
func (c *Cache) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	p, r, err := c.routeOf(ctx, "stat", name)
	if err != nil {
		return store.FileInfo{}, err
	}
	c.mu.Lock()
	e := c.entries[p]
	if rc := c.idx.Get(p); e == nil && rc != nil && time.Since(time.Unix(0, rc.Validated)) < c.cfg.Revalidate.D() {
		fi := store.FileInfo{Name: path.Base(p), Size: rc.Size, Mode: 0o444, ModTime: time.Unix(0, rc.MTime)}
		c.mu.Unlock()
		return fi, nil
	}
	c.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		m := e.m
		if m != nil && time.Since(m.Validated) < c.cfg.Revalidate.D() {
			fi := store.FileInfo{Name: path.Base(p), Size: m.Size(), Mode: 0o444, ModTime: m.MTime()}
			e.mu.Unlock()
			return fi, nil
		}
		e.mu.Unlock()
	}
	fi, err := r.Stat(ctx, p)
	fi.Writable = false
	return fi, err
}

// List lists the upstream directory.
func (c *Cache) List(ctx context.Context, name string) (fis []store.FileInfo, err error) {
	p, r, err := c.routeOf(ctx, "list", name)
	if err != nil {
		return nil, err
	}
	fis, err = r.List(ctx, p)
	for i := range fis {
		fis[i].Writable = false
	}
	return fis, err
}

// Checksum asks the upstream, which computes and keeps it: the origin's
// sum is the one the file was written with, and it needs no whole copy
// here. Algorithms the cache does not offer are refused before asking.
func (c *Cache) Checksum(ctx context.Context, name, algo string) (string, error) {
	if a, err := cksum.Normalize(algo); err != nil || !c.cfg.Checksums.Has(a) {
		if err == nil {
			err = c.cfg.Checksums.Refusal(a)
		}
		return "", &store.PathError{Op: "checksum", Path: name, Err: fmt.Errorf("%w: %v", store.ErrUnsupported, err)}
	}
	p, r, err := c.routeOf(ctx, "checksum", name)
	if err != nil {
		return "", err
	}
	return r.Checksum(ctx, p, algo)
}

// Create refuses: the cache serves reads; writes go to an origin.
func (c *Cache) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	return nil, &store.PathError{Op: "create", Path: name, Err: fmt.Errorf("%w: this path is served by the cache; write to the origin", store.ErrReadOnly)}
}

// The cache mirrors its upstreams read-only: namespace changes are refused
// with the same clear message as writes, whichever protocol asks.
var _ store.Namespace = (*Cache)(nil)

func readOnly(op, name string) error {
	return &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: this path is served by the cache; change it at the origin", store.ErrReadOnly)}
}

func (c *Cache) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	return readOnly("mkdir", name)
}

func (c *Cache) Remove(ctx context.Context, name string) error { return readOnly("rm", name) }

func (c *Cache) Rmdir(ctx context.Context, name string) error { return readOnly("rmdir", name) }

func (c *Cache) Rename(ctx context.Context, from, to string) error {
	return readOnly("mv", from)
}

func (c *Cache) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	return readOnly("chmod", name)
}

// Precheck refuses every change up front (store.Prechecker), so a MOVE,
// COPY or DELETE touching a cached path changes nothing elsewhere first.
func (c *Cache) Precheck(ctx context.Context, call store.Call) error {
	return readOnly(call.Op, call.Path)
}
