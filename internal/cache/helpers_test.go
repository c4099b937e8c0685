package cache

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/store"
)

// countingStore wraps an upstream and counts the bytes read through it;
// fail makes every read fail (a dead upstream), short makes reads return
// less than asked without an error (a broken one).
type countingStore struct {
	store.Store
	bytes  atomic.Int64
	reads  atomic.Int64
	opens  atomic.Int64
	closes atomic.Int64
	fail   atomic.Bool
	short  atomic.Bool
	delay  time.Duration
	// silentOpen: its files do not say at open what they are (OpenStat
	// false), as an upstream client without kXR_retstat.
	silentOpen bool
}

func (s *countingStore) Open(ctx context.Context, name string) (store.File, error) {
	if s.fail.Load() {
		return nil, errors.New("upstream down")
	}
	f, err := s.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	s.opens.Add(1)
	cf := &countingFile{File: f, s: s}
	if st, ok := f.(interface {
		Stat() (store.FileInfo, error)
	}); ok {
		cf.info, cf.infoErr = st.Stat()
	}
	return cf, nil
}

func (s *countingStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	if s.fail.Load() {
		return store.FileInfo{}, errors.New("upstream down")
	}
	return s.Store.Stat(ctx, name)
}

type countingFile struct {
	store.File
	s       *countingStore
	info    store.FileInfo // at open, as the root:// and https clients keep it
	infoErr error
}

func (f *countingFile) OpenStat() (store.FileInfo, bool) {
	return f.info, !f.s.silentOpen && f.infoErr == nil
}

func (f *countingFile) Close() error {
	f.s.closes.Add(1)
	return f.File.Close()
}

// openNow is the number of upstream files open at this moment.
func (s *countingStore) openNow() int64 { return s.opens.Load() - s.closes.Load() }

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	if f.s.delay > 0 {
		time.Sleep(f.s.delay)
	}
	if f.s.fail.Load() {
		return 0, errors.New("connection cut")
	}
	n, err := f.File.ReadAt(p, off)
	if f.s.short.Load() && n > 1 {
		n /= 2
		err = nil
	}
	f.s.bytes.Add(int64(n))
	f.s.reads.Add(1)
	return n, err
}

// env is a cache in front of an origin in temporary directories.
type env struct {
	t        *testing.T
	src      string // origin pool
	dir      string // cache dir
	up       *countingStore
	cfg      Config
	c        *Cache
	upstream []*countingStore
}

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	e := &env{t: t, src: t.TempDir(), dir: t.TempDir()}
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{e.src}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	e.up = &countingStore{Store: o}
	e.upstream = []*countingStore{e.up}
	e.cfg = Config{
		// Watermarks of the cache's own bytes, not of the filesystem's:
		// a test machine's full disk must not purge what a test reads.
		Settings: Settings{Dir: e.dir, BlockSize: 64 << 10, RAM: 64 << 20,
			Watermarks: Watermarks{HighWater: 1 << 40, LowWater: 1 << 39}},
		Routes: []Route{{Prefix: "/store", Upstreams: []Upstream{
			{Name: "origin", Streams: []store.Store{e.up, e.up, e.up}},
		}}},
	}
	if mod != nil {
		mod(&e.cfg)
	}
	e.start()
	return e
}

func (e *env) start() {
	e.t.Helper()
	c, err := New(e.cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.c = c
	run(e.t, c)
	// The scan of what is cached runs in the background; tests look at
	// its outcome (see TestServesBeforeScan for serving during it).
	select {
	case <-c.scanned:
	case <-time.After(10 * time.Second):
		e.t.Fatal("the start-up scan did not finish")
	}
}

// run starts c's background work as Box.Run does and closes c when the
// test ends (or earlier, if the test closes it itself).
func run(t testing.TB, c *Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		c.Close()
	})
}

func (e *env) restart() {
	e.t.Helper()
	if err := e.c.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.start()
}

// withSecondUpstream restarts the cache with a second upstream after the
// first: another origin over the same pool, which it returns.
func (e *env) withSecondUpstream() *countingStore {
	e.t.Helper()
	e.c.Close()
	o2, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{e.src}}}}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { o2.Close() })
	second := &countingStore{Store: o2}
	e.cfg.Routes[0].Upstreams = append(e.cfg.Routes[0].Upstreams, Upstream{Name: "second", Streams: []store.Store{second}})
	e.start()
	return second
}

// file writes random content of size n to the origin at name.
func (e *env) file(name string, n int) []byte {
	e.t.Helper()
	data := make([]byte, n)
	rand.Read(data)
	p := filepath.Join(e.src, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return data
}

// replace gives the origin's name new content of size n and a later
// mtime: a new version, as an upstream change looks to the cache.
func (e *env) replace(name string, n int) []byte {
	e.t.Helper()
	data := e.file(name, n)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(e.src, name), later, later); err != nil {
		e.t.Fatal(err)
	}
	return data
}

// open opens name through the cache; the test closes it.
func (e *env) open(name string) *File {
	e.t.Helper()
	f, err := e.c.Open(context.Background(), name)
	if err != nil {
		e.t.Fatalf("open %s: %v", name, err)
	}
	return f.(*File)
}

// read reads all of name through the cache in chunks of the given size.
func (e *env) read(name string, chunk int) []byte {
	e.t.Helper()
	f, err := e.c.Open(context.Background(), name)
	if err != nil {
		e.t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	var out bytes.Buffer
	buf := make([]byte, chunk)
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		out.Write(buf[:n])
		off += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			e.t.Fatalf("read %s at %d: %v", name, off, err)
		}
	}
	return out.Bytes()
}

// readCached reads name through the cache, wanting want and no byte
// fetched upstream.
func (e *env) readCached(name string, want []byte) {
	e.t.Helper()
	before := e.up.bytes.Load()
	if got := e.read(name, 64<<10); !bytes.Equal(got, want) {
		e.t.Fatalf("%s: the cached copy differs from the origin's", name)
	}
	if up := e.up.bytes.Load() - before; up != 0 {
		e.t.Fatalf("%s: %d bytes fetched upstream for a cached file, want 0", name, up)
	}
}

// forgetIdle makes every idle file leave memory, as the handle reaper
// does one idle time after the last close, and returns the upstream
// handles it closed. A map save under way (the flusher's) keeps an entry
// for another round (forgetLocked), so it goes round until none is left.
func (e *env) forgetIdle() int {
	e.t.Helper()
	closed := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		closed += e.c.closeIdle(time.Now().Add(time.Hour))
		e.c.mu.Lock()
		live := len(e.c.entries)
		e.c.mu.Unlock()
		if live == 0 {
			return closed
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d entries still in memory", live)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle waits until no fetch or disk write is pending, and every
// buffer not kept for a reader is back (a writer gives its buffer back a
// moment after its fetch leaves the table busyFetches counts).
func (e *env) settle() {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.c.busyFetches() > 0 || len(e.c.writeQ) > 0 || e.c.budget.inUse() > e.c.keep.held() {
		if time.Now().After(deadline) {
			e.t.Fatal("cache did not settle")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i) }()
	}
	wg.Wait()
}

// readWanting reads n bytes at off through f, wanting want's bytes there.
func readWanting(t *testing.T, f *File, want []byte, off int64, n int) {
	t.Helper()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, want[off:off+int64(n)]) {
		t.Fatalf("wrong bytes at %d", off)
	}
}
