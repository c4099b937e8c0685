package tpc

import (
	"context"
	"strings"

	"sitebox/internal/cksum"
)

// The copy verifies what it wrote against the source's checksum. Reading
// the written file back to sum it cost a second pass over the whole
// file after the copy (and as much CPU as the copy's own reads); instead
// each stream sums the chunk it writes, and the chunks' sums are folded
// into the file's (adler32 combines). The source is asked for its
// checksum when the copy starts, so it computes it while the data
// moves, not after.

// chunkSums holds each chunk's adler32, by chunk number; every stream
// writes only the entries of its own chunks.
type chunkSums []uint32

func newChunkSums(size int64) chunkSums {
	s := make(chunkSums, (size+chunk-1)/chunk)
	for i := range s {
		s[i] = 1 // adler32 of no data
	}
	return s
}

// add sums data, the next bytes written of the chunk at chunkOff (the
// whole chunk, or its pieces in order).
func (s chunkSums) add(chunkOff int64, data []byte) {
	if s != nil {
		i := chunkOff / chunk
		s[i] = cksum.Adler32Update(s[i], data)
	}
}

// total is the file's adler32, formatted as servers give it.
func (s chunkSums) total(size int64) string {
	sum := uint32(1)
	for i, c := range s {
		n := min(chunk, size-int64(i)*chunk)
		sum = cksum.Adler32Combine(sum, c, n)
	}
	return cksum.Format(sum)
}

// sourceSum is the source's checksum, asked for when the copy starts.
type sourceSum struct {
	done   chan struct{}
	sum    string
	err    error
	cancel context.CancelFunc
}

// askSource starts asking the source for its checksum; nil when it
// offers none.
func (j *Job) askSource(ctx context.Context) *sourceSum {
	if j.Src.Checksum == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &sourceSum{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		s.sum, s.err = j.Src.Checksum(ctx)
	}()
	return s
}

// wait is the source's answer.
func (s *sourceSum) wait(ctx context.Context) (string, error) {
	select {
	case <-s.done:
		return s.sum, s.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop ends the question (a copy that failed no longer needs it) and
// waits for it to end.
func (s *sourceSum) stop() {
	if s != nil {
		s.cancel()
		<-s.done
	}
}

func sameSum(a, b string) bool {
	return strings.EqualFold(strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0"))
}
