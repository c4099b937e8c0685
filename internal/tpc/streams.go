package tpc

import (
	"context"
	"errors"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// copy moves the data. One stream holds a buffer from the budget for the
// whole copy (the copy's seat, waited for in turn); up to Streams-1 more
// take spare memory a chunk at a time (Budget.spare), so under memory
// pressure a copy runs with fewer streams rather than waiting, and a
// stream stuck on a slow source holds its buffer for one chunk only. A
// sink that takes data only in order gets one stream; no copy gets more
// streams than it has chunks, nor a buffer larger than its file.
func (j *Job) copy(ctx context.Context) error {
	if j.Src.Size <= 0 {
		return nil
	}
	if j.Buffers == nil {
		return errors.New("tpc: the copy has no buffer budget")
	}
	size := min(chunk, j.Src.Size)
	streams := min(max(j.Streams, 1), MaxStreams, int((j.Src.Size+chunk-1)/chunk))
	if j.Dst.Sequential {
		streams = 1
	}
	seat, err := j.Buffers.seat(ctx, size)
	if err != nil {
		return err
	}
	defer seat.release()
	g, gctx := errgroup.WithContext(ctx)
	if streams == 1 && j.Src.Window > chunk {
		j.held = &heldRange{parent: gctx, window: j.Src.Window}
		defer j.held.close()
	}
	m := &mover{job: j, g: g, size: size}
	m.extras.Store(int32(streams - 1))
	g.Go(func() error { return m.seatStream(gctx, seat.p) })
	return g.Wait()
}

// mover hands out the chunks of one copy to its streams.
type mover struct {
	job    *Job
	g      *errgroup.Group
	size   int64 // buffer size: a chunk, or the whole file if smaller
	next   atomic.Int64
	extras atomic.Int32 // extra streams that may still start
}

// claim takes the next chunk's offset; false when none is left.
func (m *mover) claim() (int64, bool) {
	off := m.next.Add(chunk) - chunk
	return off, off < m.job.Src.Size
}

// seatStream moves chunks with the seat's buffer until none is left,
// starting extra streams whenever spare memory allows.
func (m *mover) seatStream(ctx context.Context, buf []byte) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.startExtras(ctx)
		off, ok := m.claim()
		if !ok {
			return nil
		}
		if err := m.job.moveChunk(ctx, buf, off); err != nil {
			return err
		}
	}
}

// startExtras starts as many extra streams as spare memory allows.
func (m *mover) startExtras(ctx context.Context) {
	for m.extras.Load() > 0 && m.next.Load() < m.job.Src.Size {
		buf := m.job.Buffers.spare(m.size)
		if buf == nil {
			return
		}
		m.extras.Add(-1)
		m.g.Go(func() error {
			defer m.extras.Add(1) // the seat stream may start it again
			return m.extraStream(ctx, buf)
		})
	}
}

// extraStream moves chunks, taking its buffer again for each from spare
// memory, and ends when there is none (or no chunk is left).
func (m *mover) extraStream(ctx context.Context, buf *buffer) error {
	for {
		off, ok := m.claim()
		if !ok || ctx.Err() != nil {
			buf.release()
			return ctx.Err()
		}
		err := m.job.moveChunk(ctx, buf.p, off)
		buf.release()
		if err != nil {
			return err
		}
		if buf = m.job.Buffers.spare(m.size); buf == nil {
			return nil
		}
	}
}
