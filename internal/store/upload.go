package store

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// ParallelWriter is a writable file whose WriteAt may be called from
// several goroutines at once, at distinct offsets, each call a request of
// its own on the wire. A root:// file is one: each write waits a round
// trip for its answer, so an upload sent one chunk at a time moves one
// chunk per round trip (1 MiB chunks over a 25 ms round trip: 40 MB/s at
// best, whatever the link). An https upload is one PUT whose body streams
// in order, and is not one.
type ParallelWriter interface {
	WritableFile
	// WritesInFlight is how many writes the file takes at once.
	WritesInFlight() int
}

// Upload writes the first size bytes of src to f from offset 0, in chunks
// of chunk bytes: up to window chunks in flight at once when f is a
// ParallelWriter (found with As; no more than its WritesInFlight), else
// one after another. written, if not nil, is told each chunk's length
// once the file took it, from one goroutine at a time. Upload returns how
// many bytes from offset 0 the file took before the first failure (size
// on success) and that failure. A source shorter than size is a failure:
// nothing is made up.
func Upload(f WritableFile, src io.ReaderAt, size int64, chunk, window int, written func(n int)) (int64, error) {
	if chunk <= 0 || size < 0 {
		return 0, fmt.Errorf("%w: upload of %d bytes in chunks of %d", ErrInvalid, size, chunk)
	}
	if pw, ok := As[ParallelWriter](f); ok {
		window = min(window, pw.WritesInFlight())
	} else {
		window = 1
	}
	u := &upload{f: f, chunk: int64(chunk), written: written, done: map[int64]int64{}}
	u.bufs = make(chan []byte, max(window, 1))
	for range max(window, 1) {
		u.bufs <- nil // allocated on first use: a small file needs one, of its size
	}
	for off := int64(0); off < size; off += u.chunk {
		buf := <-u.bufs // a write that failed says so before giving its back
		if u.failure() != nil {
			break
		}
		n := min(u.chunk, size-off)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if got, err := src.ReadAt(buf, off); int64(got) < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("the source ended at byte %d, before the %d bytes to upload", off+int64(got), size)
			}
			u.fail(err)
			u.bufs <- buf
			break
		}
		u.wg.Add(1)
		go u.write(buf, off)
	}
	u.wg.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.prefix, u.err
}

// upload is one Upload's chunks in flight and what came back.
type upload struct {
	f       WritableFile
	chunk   int64
	written func(n int)
	bufs    chan []byte // free chunk buffers: their number is the window
	wg      sync.WaitGroup

	mu     sync.Mutex
	err    error
	prefix int64           // bytes from 0 the file took, in order
	done   map[int64]int64 // chunks taken beyond prefix: offset → length
}

func (u *upload) write(buf []byte, off int64) {
	defer u.wg.Done()
	_, err := u.f.WriteAt(buf, off)
	n := int64(len(buf))
	defer func() { u.bufs <- buf }()
	if err != nil {
		u.fail(err)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.done[off] = n
	for l, ok := u.done[u.prefix]; ok; l, ok = u.done[u.prefix] {
		delete(u.done, u.prefix)
		u.prefix += l
	}
	if u.written != nil {
		u.written(int(n))
	}
}

// fail keeps the first failure: no chunk is started after it.
func (u *upload) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err == nil {
		u.err = err
	}
}

func (u *upload) failure() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}
