package server

import (
	"sync"

	"sitebox/internal/xrootd/proto"
)

// writerLocks lets one client at a time write a file, as XRootD's file
// lock does for writers: a second open for writing is refused with
// kXR_FileLocked before it can truncate or interleave with the first, so
// two concurrent `xrdcp -f` to one path leave one whole upload, never a
// mix, and racing creates get a clear "in use" instead of a spurious
// "file already exists". Readers are not locked out (see
// docs/root-protocol.md), nor is the session holding the lock: a client
// may open its own file again (to update pages it wrote with pgwrite).
type writerLocks struct {
	mu   sync.Mutex // protects held
	held map[string]*writerLock
}

type writerLock struct {
	owner *session
	n     int // opens by owner
}

// lock takes path for a writer of session owner; the returned unlock
// gives it back and may be called more than once.
func (l *writerLocks) lock(path string, owner *session) (unlock func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	wl := l.held[path]
	switch {
	case wl == nil:
		if l.held == nil {
			l.held = map[string]*writerLock{}
		}
		wl = &writerLock{owner: owner}
		l.held[path] = wl
	case wl.owner != owner:
		return nil, errorf(proto.ErrFileLocked, "output file %s is already opened by 1 writer; open denied", path)
	}
	wl.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if wl.n--; wl.n == 0 {
				delete(l.held, path)
			}
		})
	}, nil
}

// unlockWriter gives back f's writer lock, if it holds one.
func (f *openFile) unlockWriter() {
	if f.unlock != nil {
		f.unlock()
	}
}
