package server

import (
	"encoding/binary"
	"log/slog"
	"sync"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxOpenFiles bounds one session's file table so a client cannot exhaust
// the server's descriptors.
const maxOpenFiles = 4096

// maxBadPages bounds the pgwrite pages with a bad CRC a file may have
// awaiting retransmission (XRootD's kXR_pgMaxEos).
const maxBadPages = 256

// openFile is one entry of a session's file table. Requests using it hold
// a reference, so close waits for in-flight reads and writes rather than
// pulling the descriptor from under a sendfile.
type openFile struct {
	path string
	f    store.File
	w    store.WritableFile // nil when opened for reading
	fd   int                // descriptor for sendfile, or -1
	refs sync.WaitGroup

	mu  sync.Mutex
	bad map[int64]int // pgwrite pages awaiting a good copy: offset → length
}

func newOpenFile(path string, f store.File, w store.WritableFile) *openFile {
	of := &openFile{path: path, f: f, w: w, fd: -1}
	if sf, ok := f.(store.SendFiler); ok {
		of.fd = int(sf.Fd())
	}
	return of
}

// release gives back the reference acquire took.
func (f *openFile) release() { f.refs.Done() }

// fileTable maps the 4-byte handles a session hands out to open files.
type fileTable struct {
	mu    sync.Mutex
	next  uint32
	files map[uint32]*openFile
}

// count returns how many files are open.
func (t *fileTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.files)
}

func (t *fileTable) add(f *openFile) ([4]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.files == nil {
		t.files = map[uint32]*openFile{}
	}
	if len(t.files) >= maxOpenFiles {
		return [4]byte{}, errorf(proto.ErrNoMemory, "too many open files in this session (limit %d)", maxOpenFiles)
	}
	for t.files[t.next] != nil {
		t.next++
	}
	k := t.next
	t.next++
	t.files[k] = f
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], k)
	return h, nil
}

// acquire returns the open file for h with a reference the caller must
// release.
func (t *fileTable) acquire(h [4]byte) (*openFile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.files[binary.BigEndian.Uint32(h[:])]
	if f == nil {
		return nil, errorf(proto.ErrFileNotOpen, "file handle %x does not refer to an open file", h)
	}
	f.refs.Add(1)
	return f, nil
}

// remove takes h out of the table and waits until no request uses the file;
// the caller then closes it.
func (t *fileTable) remove(h [4]byte) (*openFile, error) {
	t.mu.Lock()
	k := binary.BigEndian.Uint32(h[:])
	f := t.files[k]
	if f == nil {
		t.mu.Unlock()
		return nil, errorf(proto.ErrFileNotOpen, "file handle %x does not refer to an open file", h)
	}
	delete(t.files, k)
	t.mu.Unlock()
	f.refs.Wait()
	return f, nil
}

// closeAll closes every file when the session ends (no request runs then).
func (t *fileTable) closeAll(log *slog.Logger) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, f := range t.files {
		if err := f.f.Close(); err != nil {
			log.Warn("close at disconnect", "path", f.path, "err", err)
		}
		delete(t.files, k)
	}
}
