package tpc

import "fmt"

// A chunk's pieces are written as they arrive. Through the page cache a
// piece is written at once, from the first piece of the chunk's buffer,
// which every piece reuses: the bytes just received are still in the
// CPU's cache when the kernel copies them (see piece). Past the page
// cache (direct.go) nothing copies them, but the disk takes its time:
// written at once, each piece's write would stop the stream's receiving
// for as long, so each piece gets its own part of the buffer and is
// written by a goroutine of the chunk's while the next ones arrive.

// directPiece is how much of a chunk is written past the page cache at a
// time: large writes for the disk, a few per chunk to overlap.
const directPiece = 512 << 10

// chunkWrites writes the pieces of one chunk, whose buffer is buf and
// whose first byte goes to off.
type chunkWrites struct {
	j     *Job
	buf   []byte
	off   int64
	queue chan []byte // the pieces to write behind the reads, in order
	done  chan error  // the writer's first error, once it ends
}

// writesOf starts the writes of the chunk at off held in buf. finish
// must be called before the buffer is used for anything else.
func (j *Job) writesOf(buf []byte, off int64) *chunkWrites {
	w := &chunkWrites{j: j, buf: buf, off: off}
	if j.direct.On() && len(buf) > directPiece {
		w.queue = make(chan []byte, (len(buf)+directPiece-1)/directPiece)
		w.done = make(chan error, 1)
		go w.writeBehind()
	}
	return w
}

// next is the buffer for the piece at pos of the chunk: a part of its
// own when written behind the reads, else the first piece's memory.
func (w *chunkWrites) next(pos int) []byte {
	if w.queue != nil {
		return w.buf[pos : pos+min(directPiece, len(w.buf)-pos)]
	}
	return w.buf[:min(piece, len(w.buf)-pos)]
}

// put sums p, the bytes at pos of the chunk, and writes it, now or
// behind the reads.
func (w *chunkWrites) put(p []byte, pos int) error {
	w.j.sums.add(w.off, p)
	if w.queue != nil {
		w.queue <- p
		return nil
	}
	return w.j.written(p, w.off+int64(pos))
}

// finish waits for the writes behind the reads and returns the first
// error of the chunk's writes.
func (w *chunkWrites) finish() error {
	if w.queue == nil {
		return nil
	}
	close(w.queue)
	return <-w.done
}

func (w *chunkWrites) writeBehind() {
	var err error
	at := w.off
	for p := range w.queue {
		if err == nil {
			err = w.j.written(p, at)
		}
		at += int64(len(p))
	}
	w.done <- err
}

// written writes p at off and counts it as moved.
func (j *Job) written(p []byte, off int64) error {
	if err := j.writeAt(p, off); err != nil {
		return fmt.Errorf("writing destination at %d: %w", off, err)
	}
	j.moved.Add(int64(len(p)))
	return nil
}
