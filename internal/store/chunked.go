package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Moving a whole file in chunks, several at once where the other end
// allows it: Upload into a writable file, Download out of a file.

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
		window = max(min(window, pw.WritesInFlight()), 1)
	} else {
		window = 1
	}
	u := &upload{f: f, chunk: int64(chunk), written: written, done: map[int64]int64{}, bufs: bufferSlots(window)}
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

// bufferSlots is a pool of n chunk buffers, each allocated on first use
// and of the size first needed: a small file needs one, of its size.
func bufferSlots(n int) chan []byte {
	slots := make(chan []byte, n)
	for range n {
		slots <- nil
	}
	return slots
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

// Download reads the first size bytes of f into dst at the same offsets,
// in chunks of chunk bytes, up to window at once: reads may run in
// parallel (io.ReaderAt), and on a remote file each is a request of its
// own, so together they hide the round trip, as xrdcp's parallel chunks
// do. Each read is bounded by ctx where the file can be
// (ContextReaderAt). got, if not nil, is told each chunk's length once
// it is in dst, from one goroutine at a time. A file shorter than size is
// a failure: nothing is made up.
func Download(ctx context.Context, f File, dst io.WriterAt, size int64, chunk, window int, got func(n int)) error {
	if chunk <= 0 || size < 0 {
		return fmt.Errorf("%w: download of %d bytes in chunks of %d", ErrInvalid, size, chunk)
	}
	window = max(window, 1)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(window)
	bufs := bufferSlots(window) // a buffer for each read the group runs
	var mu sync.Mutex
	off := int64(0)
	for ; off < size && gctx.Err() == nil; off += int64(chunk) {
		off := off // this chunk's, not the loop's
		g.Go(func() error {
			b := <-bufs
			want := min(int64(chunk), size-off)
			if int64(cap(b)) < want {
				b = make([]byte, want)
			}
			defer func() { bufs <- b }()
			b = b[:want]
			n, err := ReadAtContext(gctx, f, b, off)
			if n < len(b) {
				if err == nil || errors.Is(err, io.EOF) {
					err = fmt.Errorf("the file ended at byte %d, before the %d bytes to read (changed while read?)", off+int64(n), size)
				}
				return err
			}
			if _, err := dst.WriteAt(b, off); err != nil {
				return err
			}
			if got != nil {
				mu.Lock()
				got(len(b))
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if off < size {
		return ctx.Err() // stopped before every chunk was asked for
	}
	return nil
}

// ReadAtContext reads with f's ReadAtContext when it has one (bounded by
// ctx), else with ReadAt.
func ReadAtContext(ctx context.Context, f File, p []byte, off int64) (int, error) {
	if cr, ok := As[ContextReaderAt](f); ok {
		return cr.ReadAtContext(ctx, p, off)
	}
	return f.ReadAt(p, off)
}
