package store

import (
	"errors"
	"fmt"
	"sync"
)

// ErrLocked is the answer to a writer of a file another client is
// writing: root:// kXR_FileLocked (3003), https 423 Locked, as xrootd
// and XrdHttp answer.
var ErrLocked = errors.New("file is being written by another client")

// WriterLocker is implemented by stores that let one writer at a time
// have a file, whatever protocol it comes by: an open for writing on
// root://, a PUT, the destination of a third-party copy. A frontend takes
// the lock on the name the client asked for before anything is created
// or truncated (an upload written under a temporary name holds it until
// its rename), so two concurrent uploads leave one of them whole,
// never a mix, and the second hears why at once.
type WriterLocker interface {
	// LockWriter takes name for owner (comparable: a session, a
	// request); the returned unlock gives it back and may be called
	// more than once. The owner holding a name may take it again.
	LockWriter(name string, owner any) (unlock func(), err error)
}

// LockWriter takes name's writer lock in s; a store without writer
// locks (a director, which sends the writer elsewhere) needs none.
func LockWriter(s Store, name string, owner any) (unlock func(), err error) {
	l, ok := As[WriterLocker](s)
	if !ok {
		return func() {}, nil
	}
	return l.LockWriter(name, owner)
}

// Writers is a table of writer locks by name, for a store implementing
// WriterLocker. The zero value is ready; safe for concurrent use.
type Writers struct {
	mu   sync.Mutex // protects held
	held map[string]*writerLock
}

type writerLock struct {
	owner any
	n     int // locks taken by owner
}

// LockWriter implements WriterLocker.
func (w *Writers) LockWriter(name string, owner any) (unlock func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wl := w.held[name]
	switch {
	case wl == nil:
		if w.held == nil {
			w.held = map[string]*writerLock{}
		}
		wl = &writerLock{owner: owner}
		w.held[name] = wl
	case wl.owner != owner:
		return nil, &PathError{Op: "open for writing", Path: name, Err: fmt.Errorf("%w; try again when it is done, or write another name (any open that may create or change a file is a writer here, ROOT's RECREATE and NEW included)", ErrLocked)}
	}
	wl.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if wl.n--; wl.n == 0 {
				delete(w.held, name)
			}
		})
	}, nil
}
