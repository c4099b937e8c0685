package tpc

// A chunk moves a piece at a time: read (or received) and written while
// the piece is still in the CPU's cache.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"sitebox/internal/store"
)

// piece is how much of a streamed chunk is written at a time: small
// enough that the bytes just received are still in the CPU's cache when
// they are written (on the reference machine, writing a file in 4 MiB
// pieces cost 3× the CPU of 64 KiB ones).
const piece = 128 << 10

// streamChunk copies [off, off+len(buf)) with one ranged read whose
// bytes are written piece by piece as they arrive (see chunkWrites).
func (j *Job) streamChunk(ctx context.Context, rr store.RangeReader, buf []byte, off int64) (err error) {
	body, done, err := j.openRange(ctx, rr, off, int64(len(buf)))
	if err != nil {
		return fmt.Errorf("reading source at %d: %w", off, err)
	}
	defer func() { done(err == nil) }()
	if wt, ok := body.(io.WriterTo); ok {
		return j.writeFrom(wt, len(buf), off)
	}
	w := j.writesOf(buf, off)
	defer func() {
		if ferr := w.finish(); err == nil {
			err = ferr
		}
	}()
	for pos := 0; pos < len(buf); {
		p := w.next(pos)
		if n, err := io.ReadFull(body, p); err != nil {
			if err == io.EOF { // ended at a piece's start: still short
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading source at %d: %w", off+int64(pos+n), err)
		}
		if err := w.put(p, pos); err != nil {
			return err
		}
		pos += len(p)
	}
	return nil
}

// copyPieces copies [off, off+len(buf)) of a local source a piece at a
// time (see chunkWrites): a read costs no round trip, and each piece is
// written (or sent, in a push) while still in the CPU's cache, where a
// whole chunk read first would have left it.
func (j *Job) copyPieces(ctx context.Context, buf []byte, off int64) (err error) {
	w := j.writesOf(buf, off)
	defer func() {
		if ferr := w.finish(); err == nil {
			err = ferr
		}
	}()
	for pos := 0; pos < len(buf); {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := w.next(pos)
		at := off + int64(pos)
		if n, err := readFullAt(j.Src.File.ReadAt, p, at); n < len(p) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading source at %d: %w", at+int64(n), err)
		}
		if err := w.put(p, pos); err != nil {
			return err
		}
		pos += len(p)
	}
	return nil
}

// openRange returns a reader of the n bytes at off, from the held read
// of a one-stream copy or from a ranged read of its own; done ends it.
func (j *Job) openRange(ctx context.Context, rr store.RangeReader, off, n int64) (io.Reader, func(ok bool), error) {
	if j.held != nil {
		return j.held.take(ctx, rr, off, n, j.Src.Size)
	}
	body, err := rr.ReadRange(ctx, off, n)
	if err != nil {
		return nil, nil, err
	}
	return body, func(bool) { body.Close() }, nil
}

// writeFrom copies the n bytes at off from a body that writes them out
// of its own buffers (a root:// source's pieces as they arrive), sparing
// the copy into the chunk's buffer.
func (j *Job) writeFrom(wt io.WriterTo, n int, off int64) error {
	w := &chunkWriter{j: j, chunk: off, pos: off, end: off + int64(n)}
	_, err := wt.WriteTo(w)
	switch {
	case w.err != nil:
		return w.err
	case err != nil:
		return fmt.Errorf("reading source at %d: %w", w.pos, err)
	case w.pos < w.end:
		return fmt.Errorf("reading source at %d: %w", w.pos, io.ErrUnexpectedEOF)
	}
	return nil
}

// chunkWriter writes the chunk at offset chunk, in order, at pos.
type chunkWriter struct {
	j               *Job
	chunk, pos, end int64
	err             error // of the destination
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if w.pos+int64(len(p)) > w.end {
		w.err = fmt.Errorf("reading source at %d: %w: more bytes than the range asked", w.end, store.ErrIO)
		return 0, w.err
	}
	w.j.sums.add(w.chunk, p)
	if err := w.j.written(p, w.pos); err != nil {
		w.err = err
		return 0, w.err
	}
	w.pos += int64(len(p))
	return len(p), nil
}
