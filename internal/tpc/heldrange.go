package tpc

import (
	"context"
	"io"

	"sitebox/internal/store"
)

// A copy that runs one stream asks a source that allows it (Source.Window)
// for a window of several chunks with one ranged read and takes its
// chunks from it in turn. One request per chunk costs a round trip each
// (request out, the source's open and first bytes back), during which
// nothing moves: 256 of them for 1 GiB, each waiting for both servers to
// be scheduled on a busy machine. Each chunk keeps its own deadline and
// can still be cut off by the budget: either ends the held read.

// heldRange is the ranged read a one-stream copy keeps open across
// chunks. Only the copy's one stream uses it.
type heldRange struct {
	parent context.Context // the stream's: the read outlives each chunk
	window int64
	body   io.ReadCloser
	cancel context.CancelFunc
	next   int64 // the offset of the body's next byte
	end    int64 // the end of the body's range
}

// take returns the n bytes at off of the source (of size bytes): from
// the held read when it is at off and holds them, else from a new one
// asking for the next window. done must be called once the chunk ends,
// with whether all n bytes were read: a chunk that failed or was cut off
// leaves the read unusable, and it is closed.
func (h *heldRange) take(ctx context.Context, rr store.RangeReader, off, n, size int64) (io.Reader, func(ok bool), error) {
	if h.body == nil || h.next != off || h.end < off+n {
		h.close()
		rctx, cancel := context.WithCancel(h.parent)
		end := min(size, off+max(n, h.window))
		body, err := rr.ReadRange(rctx, off, end-off)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		h.body, h.cancel, h.next, h.end = body, cancel, off, end
	}
	// The chunk's deadline, and the budget's cut, end the held read.
	stop := context.AfterFunc(ctx, h.cancel)
	done := func(ok bool) {
		if !stop() || !ok {
			h.close()
			return
		}
		if h.next = off + n; h.next == h.end {
			h.close()
		}
	}
	// A plain reader: a body that writes itself out (io.WriterTo) would
	// write past this chunk.
	return struct{ io.Reader }{h.body}, done, nil
}

// close ends the held read, if any.
func (h *heldRange) close() {
	if h.body != nil {
		h.body.Close()
		h.cancel()
		h.body, h.cancel = nil, nil
	}
}
