package mount

import (
	"container/list"
	"context"
	"errors"
	"io"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"sitebox/internal/store"
)

// A compiler, a Python import or a shell script opens many small files
// of one directory, one after the other: over a WAN each open costs the
// open, the read and, through a cache, the cache's check of the file,
// several round trips in series for a few kilobytes. smallFiles reads
// the small files of a directory whole, all at once in parallel, when
// the first of them is opened after the directory was listed, so the
// opens that follow are answered from memory (listing alone, as ls and
// find do, reads nothing). The bytes are read
// through the view's data store, so a local cache in front of the
// server keeps them too and the WAN carries them once.
//
// Entries are keyed by the credential that read them, like the
// listings: a caller is only ever served bytes its own credential was
// allowed to read. An entry serves an open only while the directory's
// current listing gives the file the size and mtime it was read with.
type smallFiles struct {
	maxFile  int64 // files of at most this size are read whole
	maxBytes int64 // memory for them
	perDir   int   // files read per listing, at most
	workers  int
	log      *slog.Logger
	jobs     chan smallJob

	mu      sync.Mutex
	held    int64
	lru     *list.List // of *smallEntry, most recently used first
	byKey   map[smallKey]*list.Element
	pending map[smallKey]*pendingRead
}

// pendingRead is a read under way: done is closed when it ends, stale
// set when the mount changed the file meanwhile (its bytes are then not
// kept).
type pendingRead struct {
	done  chan struct{}
	stale bool
}

type smallKey struct {
	who  string // the view's Key
	path string // store path
}

type smallEntry struct {
	key   smallKey
	size  int64
	mtime time.Time
	data  []byte
}

type smallJob struct {
	v   *View
	key smallKey
	fi  store.FileInfo
	p   *pendingRead
}

// Defaults of the small-file reads: files up to 64 KiB (source files
// and headers), 64 MiB of memory, 256 files a directory (a directory of
// thousands of small files is data, read when asked), 16 reads at once.
const (
	defaultPrefetchFile = 64 << 10
	defaultPrefetchRAM  = 64 << 20
	prefetchPerDir      = 256
	prefetchWorkers     = 16
	// prefetchTimeout bounds one file's read: a server that stops
	// answering leaves the open to ask it again, not waiting forever.
	prefetchTimeout = 30 * time.Second
)

func newSmallFiles(maxFile, maxBytes int64, log *slog.Logger) *smallFiles {
	return &smallFiles{maxFile: maxFile, maxBytes: maxBytes, perDir: prefetchPerDir, workers: prefetchWorkers,
		log: log, jobs: make(chan smallJob, 4*prefetchPerDir),
		lru: list.New(), byKey: map[smallKey]*list.Element{}, pending: map[smallKey]*pendingRead{}}
}

func (s *smallFiles) enabled() bool { return s.maxFile > 0 && s.maxBytes > 0 }

// run reads the files queued until ctx ends.
func (s *smallFiles) run(ctx context.Context) {
	if !s.enabled() {
		return
	}
	var wg sync.WaitGroup
	for range s.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-s.jobs:
					s.read(ctx, j)
				}
			}
		}()
	}
	wg.Wait()
	// Opens waiting for reads that will not happen now ask the server.
	for {
		select {
		case j := <-s.jobs:
			s.finish(j, nil)
		default:
			return
		}
	}
}

// readDir queues the small files (not empty ones: there is nothing to
// read) of the directory dir (a store path) as v listed it.
func (s *smallFiles) readDir(v *View, dir string, fis []store.FileInfo) {
	if !s.enabled() {
		return
	}
	queued := 0
	for _, fi := range fis {
		if queued >= s.perDir {
			s.log.Debug("small files of a directory read only in part", "dir", dir, "read", queued)
			return
		}
		if fi.IsDir() || fi.Size > s.maxFile || fi.Size == 0 || fi.Name == "" || fi.Name == "." || fi.Name == ".." {
			continue
		}
		key := smallKey{who: v.Key, path: path.Join(dir, fi.Name)}
		if p := s.claim(key, fi); p != nil {
			v.refs.Add(1) // the view's client stays open for the read
			select {
			case s.jobs <- smallJob{v: v, key: key, fi: fi, p: p}:
				queued++
			default: // busy: the open will ask the server itself
				v.refs.Add(-1)
				s.finish(smallJob{key: key, p: p}, nil)
				return
			}
		}
	}
}

// claim marks key as being read, unless it is held as fi describes it
// or already being read (nil).
func (s *smallFiles) claim(key smallKey, fi store.FileInfo) *pendingRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.pending[key]; busy {
		return nil
	}
	if e := s.byKey[key]; e != nil && e.Value.(*smallEntry).matches(fi) {
		return nil
	}
	p := &pendingRead{done: make(chan struct{})}
	s.pending[key] = p
	return p
}

func (s *smallFiles) read(ctx context.Context, j smallJob) {
	defer j.v.refs.Add(-1)
	ctx, cancel := context.WithTimeout(ctx, prefetchTimeout)
	defer cancel()
	data, err := readWhole(ctx, j.v.Data, j.key.path, j.fi.Size)
	if err != nil {
		s.log.Debug("small file not read ahead", "path", j.key.path, "who", j.v.Who, "err", err.Error())
		s.finish(j, nil)
		return
	}
	s.finish(j, &smallEntry{key: j.key, size: j.fi.Size, mtime: j.fi.ModTime, data: data})
}

// errChanged is a file whose size is not what its listing said: it is
// being written, and is left for the open to read.
var errChanged = errors.New("size differs from the listing")

// readWhole reads the file p, which its listing says is size bytes.
func readWhole(ctx context.Context, st store.Store, p string, size int64) ([]byte, error) {
	f, err := st.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, size+1) // one more: a file grown since is seen
	n, err := store.ReadAtContext(ctx, f, buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if int64(n) != size {
		return nil, errChanged
	}
	return buf[:n:n], nil
}

// finish records the read's result (nil: nothing to keep) and wakes the
// opens waiting for it.
func (s *smallFiles) finish(j smallJob, e *smallEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, j.key)
	close(j.p.done)
	if e == nil || j.p.stale {
		return
	}
	if old := s.byKey[e.key]; old != nil {
		s.dropLocked(old)
	}
	s.byKey[e.key] = s.lru.PushFront(e)
	s.held += int64(len(e.data))
	for s.held > s.maxBytes && s.lru.Len() > 0 {
		s.dropLocked(s.lru.Back())
	}
}

func (s *smallFiles) dropLocked(el *list.Element) {
	e := s.lru.Remove(el).(*smallEntry)
	delete(s.byKey, e.key)
	s.held -= int64(len(e.data))
}

// get is the content of p as v read it, if it is held and fi (the
// current listing's entry) still describes it; a read under way is
// waited for.
func (s *smallFiles) get(ctx context.Context, v *View, p string, fi store.FileInfo) ([]byte, bool) {
	if !s.enabled() || fi.Size > s.maxFile {
		return nil, false
	}
	key := smallKey{who: v.Key, path: p}
	s.mu.Lock()
	pr := s.pending[key]
	s.mu.Unlock()
	if pr != nil {
		select {
		case <-pr.done:
		case <-ctx.Done():
			return nil, false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.byKey[key]
	if el == nil {
		return nil, false
	}
	e := el.Value.(*smallEntry)
	if !e.matches(fi) {
		s.dropLocked(el)
		return nil, false
	}
	s.lru.MoveToFront(el)
	return e.data, true
}

// forget drops every credential's copy of the paths given and of
// everything below them: the mount changed them (a directory renamed or
// removed takes its files' names along).
func (s *smallFiles) forget(paths ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, el := range s.byKey {
		if under(k.path, paths) {
			s.dropLocked(el)
		}
	}
	for k, p := range s.pending {
		if under(k.path, paths) {
			p.stale = true
		}
	}
}

// under reports whether p is one of dirs or below one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

func (e *smallEntry) matches(fi store.FileInfo) bool {
	return e.size == fi.Size && e.mtime.Equal(fi.ModTime) && !fi.ModTime.IsZero()
}

// memFile is a file open for reading whose bytes are in memory.
type memFile struct{ data []byte }

func (f *memFile) release() {}

func (f *memFile) readAt(p []byte, off int64) int {
	if off >= int64(len(f.data)) {
		return 0
	}
	return copy(p, f.data[off:])
}
