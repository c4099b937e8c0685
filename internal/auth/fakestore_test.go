package auth

import (
	"context"
	"io"
	"io/fs"
	"sort"
	"sync"

	"sitebox/internal/store"
)

// memStore is a tiny in-memory store.Store + Namespace + SpaceReporter
// that records the calls reaching it.
type memStore struct {
	mu    sync.Mutex
	files map[string][]byte
	calls []string
	opts  store.CreateOptions // of the last Create
}

func newMemStore(files ...string) *memStore {
	m := &memStore{files: map[string][]byte{}}
	for _, f := range files {
		m.files[f] = []byte("data of " + f)
	}
	return m
}

func (m *memStore) record(op string) {
	m.mu.Lock()
	m.calls = append(m.calls, op)
	m.mu.Unlock()
}

func (m *memStore) called() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

func (m *memStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	m.record("stat")
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.files[name]; ok {
		return store.FileInfo{Name: name, Size: int64(len(b)), Mode: 0o644}, nil
	}
	return store.FileInfo{}, &store.PathError{Op: "stat", Path: name, Err: store.ErrNotFound}
}

func (m *memStore) Open(ctx context.Context, name string) (store.File, error) {
	m.record("open")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	if !ok {
		return nil, &store.PathError{Op: "open", Path: name, Err: store.ErrNotFound}
	}
	return &memFile{b: b}, nil
}

func (m *memStore) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	m.record("list")
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.FileInfo
	for n := range m.files {
		if store.HasPrefix(n, name) && n != name {
			out = append(out, store.FileInfo{Name: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *memStore) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	m.record("create")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts = opts
	if _, ok := m.files[name]; ok && opts.Exclusive {
		return nil, &store.PathError{Op: "create", Path: name, Err: store.ErrExist}
	}
	m.files[name] = nil
	return &memFile{}, nil
}

func (m *memStore) Checksum(ctx context.Context, name, algo string) (string, error) {
	m.record("checksum")
	return "00000001", nil
}

func (m *memStore) Locate(ctx context.Context, name string) ([]store.Location, error) {
	m.record("locate")
	return []store.Location{{}}, nil
}

func (m *memStore) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	m.record("mkdir")
	return nil
}

func (m *memStore) Attrs(ctx context.Context, name string, q store.AttrQuery) ([]store.Attr, error) {
	m.record(q.Op.String())
	return nil, nil
}
func (m *memStore) Remove(ctx context.Context, name string) error { m.record("rm"); return nil }
func (m *memStore) Rmdir(ctx context.Context, name string) error  { m.record("rmdir"); return nil }

func (m *memStore) Rename(ctx context.Context, from, to string) error {
	m.record("mv")
	return nil
}

func (m *memStore) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	m.record("chmod")
	return nil
}

func (m *memStore) Space(ctx context.Context, name string) (store.Space, error) {
	m.record("space")
	return store.Space{Total: 1}, nil
}

// memFile is a File (and WritableFile) that also has a descriptor and a
// context-aware ReadAt, to check which optional interfaces survive.
type memFile struct{ b []byte }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (f *memFile) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	return f.ReadAt(p, off)
}
func (f *memFile) Stat() (store.FileInfo, error) { return store.FileInfo{Size: int64(len(f.b))}, nil }
func (f *memFile) Close() error                  { return nil }
func (f *memFile) Fd() uintptr                   { return 42 }

// Lend lends the file's bytes (store.Lender).
func (f *memFile) Lend(off int64, buf []byte, _ store.LendOptions) (store.Loan, error) {
	end := min(off+int64(len(buf)), int64(len(f.b)))
	if off >= end {
		return store.Loan{}, io.EOF
	}
	if end < off+int64(len(buf)) {
		return store.Lent(f.b[off:end], nil, nil), io.EOF
	}
	return store.Lent(f.b[off:end], nil, nil), nil
}
func (f *memFile) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }
func (f *memFile) Truncate(int64) error                     { return nil }
func (f *memFile) Sync() error                              { return nil }
