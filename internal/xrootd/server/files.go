package server

import (
	"encoding/binary"
	"sync"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// openFile is one entry of a session's file table.
type openFile struct {
	path string
	f    store.File
	w    store.WritableFile // nil when opened for reading
}

// fileTable maps the 4-byte handles a session hands out to open files.
type fileTable struct {
	mu    sync.Mutex
	next  uint32
	files map[uint32]*openFile
}

// maxOpenFiles bounds one session's table so a client cannot exhaust the
// server's descriptors.
const maxOpenFiles = 4096

func (t *fileTable) add(f *openFile) ([4]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.files == nil {
		t.files = map[uint32]*openFile{}
	}
	if len(t.files) >= maxOpenFiles {
		return [4]byte{}, errorf(proto.ErrNoMemory, "too many open files in this session (limit %d)", maxOpenFiles)
	}
	t.next++
	for t.files[t.next] != nil {
		t.next++
	}
	t.files[t.next] = f
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], t.next)
	return h, nil
}

func (t *fileTable) get(h [4]byte) (*openFile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.files[binary.BigEndian.Uint32(h[:])]
	if f == nil {
		return nil, errorf(proto.ErrFileNotOpen, "file handle %x is not open", h)
	}
	return f, nil
}

func (t *fileTable) remove(h [4]byte) (*openFile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := binary.BigEndian.Uint32(h[:])
	f := t.files[k]
	if f == nil {
		return nil, errorf(proto.ErrFileNotOpen, "file handle %x is not open", h)
	}
	delete(t.files, k)
	return f, nil
}

func (t *fileTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, f := range t.files {
		f.f.Close()
		delete(t.files, k)
	}
}
