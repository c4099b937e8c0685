package mount

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

// listedStore is filesStore with a listing of /d (the infos given) and
// a count of the files closed.
type listedStore struct {
	*filesStore
	infos  []store.FileInfo
	closed atomic.Int32
}

func (s *listedStore) List(_ context.Context, name string) ([]store.FileInfo, error) {
	if name != "/d" {
		return nil, store.ErrNotFound
	}
	return s.infos, nil
}

func (s *listedStore) Open(ctx context.Context, name string) (store.File, error) {
	f, err := s.filesStore.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &closeCounted{File: f, closed: &s.closed}, nil
}

type closeCounted struct {
	store.File
	closed *atomic.Int32
}

func (f *closeCounted) Close() error {
	f.closed.Add(1)
	return f.File.Close()
}

// zeroOpenFsys is a read-only mount of one user whose kernel does
// zero-message opens, serving s (small files off, so every file is read
// from the server), and the inode of /d/name.
func zeroOpenFsys(t *testing.T, s *listedStore, name string) (*fsys, uint64) {
	t.Helper()
	v := &View{Key: "k", Who: "test", Meta: s, Data: s}
	cfg := Config{Identities: Single{V: v}, Root: "/", ReadOnly: true, DirTTL: time.Minute, DirEntries: 100, Log: slog.New(slog.DiscardHandler)}
	if !cfg.zeroOpens() {
		t.Fatal("a read-only mount of one user does not take zero-message opens")
	}
	m := newFsys(cfg)
	m.zeroOpen.Store(true)
	d, _ := m.nodes.lookup(rootIno, "d")
	ino, _ := m.nodes.lookup(d, name)
	if _, err := m.list(context.Background(), v, "/d"); err != nil {
		t.Fatal(err)
	}
	return m, ino
}

func readIno(t *testing.T, m *fsys, ino uint64, off, size int) (string, fuse.Status) {
	t.Helper()
	buf := make([]byte, size)
	res, st := m.Read(nil, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: ino}, Offset: uint64(off), Size: uint32(size)}, buf)
	if !st.Ok() {
		return "", st
	}
	data, _ := res.Bytes(buf)
	return string(data), st
}

// With zero-message opens the kernel's OPEN is answered ENOSYS (it then
// sends none, nor closes), a close's FLUSH too, and the reads, which
// come without a handle, open the file once for all of them.
func TestZeroOpenReadsOpenTheFileOnce(t *testing.T) {
	s := &listedStore{filesStore: &filesStore{files: map[string]string{"/d/a.dat": "0123456789"}},
		infos: []store.FileInfo{fileInfo("a.dat", 10)}}
	m, ino := zeroOpenFsys(t, s, "a.dat")
	if st := m.Open(nil, &fuse.OpenIn{InHeader: fuse.InHeader{NodeId: ino}}, &fuse.OpenOut{}); st != fuse.ENOSYS {
		t.Fatalf("open: %v, want ENOSYS", st)
	}
	if st := m.Flush(nil, &fuse.FlushIn{InHeader: fuse.InHeader{NodeId: ino}}); st != fuse.ENOSYS {
		t.Fatalf("flush: %v, want ENOSYS", st)
	}
	for _, c := range []struct {
		off, size int
		want      string
	}{{0, 4, "0123"}, {4, 4, "4567"}, {8, 4, "89"}, {12, 4, ""}} {
		if got, st := readIno(t, m, ino, c.off, c.size); !st.Ok() || got != c.want {
			t.Fatalf("read %d+%d: %q %v, want %q", c.off, c.size, got, st, c.want)
		}
	}
	if n := s.openCount("/d/a.dat"); n != 1 {
		t.Errorf("opened %d times on the server, want 1", n)
	}
	// The kernel forgets the inode: no read of it can come, so the file
	// is closed.
	m.Forget(ino, 1)
	if n := s.closed.Load(); n != 1 {
		t.Errorf("%d files closed after the kernel forgot the inode, want 1", n)
	}
}

// A file the listing now gives another size or mtime (replaced on the
// server) is opened again: its reads never come from the old file.
func TestZeroOpenReopensAChangedFile(t *testing.T) {
	s := &listedStore{filesStore: &filesStore{files: map[string]string{"/d/a.dat": "old"}},
		infos: []store.FileInfo{fileInfo("a.dat", 3)}}
	m, ino := zeroOpenFsys(t, s, "a.dat")
	if got, _ := readIno(t, m, ino, 0, 16); got != "old" {
		t.Fatalf("read %q, want old", got)
	}
	s.mu.Lock()
	s.files["/d/a.dat"] = "newer"
	s.mu.Unlock()
	changed := fileInfo("a.dat", 5)
	changed.ModTime = mtime.Add(time.Second)
	m.dirs.putListing("k", "/d", []store.FileInfo{changed})
	if got, st := readIno(t, m, ino, 0, 16); got != "newer" {
		t.Fatalf("read after the change %q %v, want newer", got, st)
	}
	if n, c := s.openCount("/d/a.dat"), s.closed.Load(); n != 2 || c != 1 {
		t.Errorf("%d opens and %d closes, want 2 and 1", n, c)
	}
}

// A file the server refuses fails its reads with the refusal (no byte
// served), and the next read asks the server again.
func TestZeroOpenRefusedAtRead(t *testing.T) {
	s := &listedStore{filesStore: &filesStore{files: map[string]string{"/d/s.dat": "secret"}, denied: map[string]bool{"/d/s.dat": true}},
		infos: []store.FileInfo{fileInfo("s.dat", 6)}}
	m, ino := zeroOpenFsys(t, s, "s.dat")
	for range 2 {
		if got, st := readIno(t, m, ino, 0, 16); st != fuse.Status(syscall.EACCES) || got != "" {
			t.Fatalf("read of a refused file: %q %v, want EACCES", got, st)
		}
	}
	if n := s.openCount("/d/s.dat"); n != 2 {
		t.Errorf("%d opens, want one per read", n)
	}
}

// Opens with a request of their own everywhere else: a writable mount,
// one shared by several users.
func TestZeroOpensOnlyForOneUserReadOnly(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{ReadOnly: true}, true},
		{Config{}, false},
		{Config{ReadOnly: true, AllowOther: true}, false},
		{Config{ReadOnly: true, PerCaller: true}, false},
	} {
		if got := c.cfg.zeroOpens(); got != c.want {
			t.Errorf("%+v: zero-message opens %v, want %v", c.cfg, got, c.want)
		}
	}
}

// Past its bound the table closes the least recently read file that no
// read holds; one being read is closed by its last read.
func TestInodeFilesBound(t *testing.T) {
	tab := newInodeFiles(2)
	var released atomic.Int32
	open := func(ino uint64) *inodeFile {
		f, created := tab.acquire(ino)
		if created {
			f.h = releaseCounter{&released}
			close(f.ready)
		}
		return f
	}
	f1 := open(1) // held: being read
	tab.done(open(2))
	tab.done(open(3)) // over the bound: 2 goes, 1 is held
	if n := released.Load(); n != 1 {
		t.Fatalf("%d closed, want 1", n)
	}
	tab.done(open(4)) // 1 is held still: 3 goes
	if n := released.Load(); n != 2 {
		t.Fatalf("%d closed, want 2 (not the one being read)", n)
	}
	tab.forget(1) // dropped while read: closed by its last read
	if n := released.Load(); n != 2 {
		t.Fatalf("%d closed while a read held one, want 2", n)
	}
	tab.done(f1)
	tab.closeAll()
	if n := released.Load(); n != 4 {
		t.Errorf("%d closed in all, want 4", n)
	}
}

type releaseCounter struct{ n *atomic.Int32 }

func (r releaseCounter) release() { r.n.Add(1) }

// statCounted is a file that says its stat at open, and counts the
// stats asked of it.
type statCounted struct {
	store.File
	stats *atomic.Int32
}

func (f statCounted) OpenStat() (store.FileInfo, bool) { return fileInfo("a", 1), true }

func (f statCounted) Stat() (store.FileInfo, error) {
	f.stats.Add(1)
	return f.File.Stat()
}

// Opening a file asks no stat of it where its open said (a round trip
// to the server each).
func TestOpenedStatAsksNothingMore(t *testing.T) {
	var stats atomic.Int32
	f := statCounted{File: bytesFile{}, stats: &stats}
	if fi, err := openedStat(f); err != nil || fi.ModTime != mtime || stats.Load() != 0 {
		t.Errorf("openedStat: %+v %v with %d stats, want the open's without one", fi, err, stats.Load())
	}
}

// blockingOpens is listedStore whose first open waits until its caller
// is interrupted.
type blockingOpens struct {
	*listedStore
	first atomic.Bool
}

func (s *blockingOpens) Open(ctx context.Context, name string) (store.File, error) {
	if s.first.CompareAndSwap(false, true) {
		<-ctx.Done()
		return nil, fmt.Errorf("open %s: %w", name, ctx.Err())
	}
	return s.listedStore.Open(ctx, name)
}

// A read waiting for another's open of the file is not failed by that
// read's interruption (Ctrl-C in another program): it opens the file
// itself.
func TestZeroOpenWaiterOutlivesAnInterruptedOpener(t *testing.T) {
	ls := &listedStore{filesStore: &filesStore{files: map[string]string{"/d/a.dat": "data"}}, infos: []store.FileInfo{fileInfo("a.dat", 4)}}
	s := &blockingOpens{listedStore: ls}
	v := &View{Key: "k", Who: "test", Meta: s, Data: s}
	m := newFsys(Config{Identities: Single{V: v}, Root: "/", ReadOnly: true, DirTTL: time.Minute, DirEntries: 100, Log: slog.New(slog.DiscardHandler)})
	m.zeroOpen.Store(true)
	d, _ := m.nodes.lookup(rootIno, "d")
	ino, _ := m.nodes.lookup(d, "a.dat")
	if _, err := m.list(context.Background(), v, "/d"); err != nil {
		t.Fatal(err)
	}
	interrupt := make(chan struct{})
	first := make(chan fuse.Status, 1)
	go func() {
		buf := make([]byte, 16)
		_, st := m.Read(interrupt, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: ino}, Size: 16}, buf)
		first <- st
	}()
	for !s.first.Load() {
		time.Sleep(time.Millisecond)
	}
	second := make(chan string, 1)
	go func() {
		got, _ := readIno(t, m, ino, 0, 16)
		second <- got
	}()
	time.Sleep(20 * time.Millisecond) // the second read waits for the first's open
	close(interrupt)
	if st := <-first; st.Ok() {
		t.Errorf("the interrupted read: %v, want a failure", st)
	}
	if got := <-second; got != "data" {
		t.Errorf("the waiting read got %q, want data", got)
	}
}
