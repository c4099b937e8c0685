package davclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/store"
)

// maxRanges bounds the ranges of one multi-range request. XrdHttp 5.5
// turns them into one kXR_readv and sends a truncated answer past 1,024;
// Apache answers more than 200 with the whole file. A cache's scattered
// misses come a few dozen at a time.
const maxRanges = 64

// ReadV fills each bufs[i] from offset offs[i] with multi-range GETs (one
// per maxRanges ranges, in parallel), so scattered reads cost a round
// trip together, as kXR_readv does over root://. Every range must lie
// within the file; an answer missing any byte is an error, never a short
// buffer.
//
// A server that answers a multi-range request with the whole file, or
// with some ranges only or merged into far more bytes than asked, is
// remembered: ReadV then returns an error wrapping errors.ErrUnsupported
// at once, and the caller reads the ranges one by one.
func (r *file) ReadV(ctx context.Context, bufs [][]byte, offs []int64) error {
	if len(bufs) != len(offs) {
		return &store.PathError{Op: "readv", Path: r.name, Err: fmt.Errorf("%w: %d buffers for %d offsets", store.ErrInvalid, len(bufs), len(offs))}
	}
	spans := make([]span, 0, len(bufs))
	for i, b := range bufs {
		s := span{off: offs[i], buf: b}
		if s.off < 0 || s.off > r.info.Size-int64(len(b)) { // not s.end(): it may wrap
			return &store.PathError{Op: "readv", Path: r.name, Err: fmt.Errorf("%w: range %d+%d outside the file's %d bytes", store.ErrInvalid, s.off, len(b), r.info.Size)}
		}
		if len(b) > 0 {
			spans = append(spans, s)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	for i := 1; i < len(spans); i++ {
		if spans[i].off < spans[i-1].end() {
			return &store.PathError{Op: "readv", Path: r.name, Err: fmt.Errorf("%w: ranges at %d and %d overlap", store.ErrInvalid, spans[i-1].off, spans[i].off)}
		}
	}
	switch {
	case len(spans) == 0:
		return nil
	case len(spans) == 1:
		_, err := r.ReadAtContext(ctx, spans[0].buf, spans[0].off)
		return err
	case r.fs.noMultiRange.Load():
		return r.unsupported()
	}
	g, ctx := errgroup.WithContext(ctx)
	for part := range slices.Chunk(spans, maxRanges) {
		g.Go(func() error { return r.readRanges(ctx, part) })
	}
	return g.Wait()
}

// readRanges reads spans with one multi-range request.
func (r *file) readRanges(ctx context.Context, spans []span) error {
	resp, err := r.fs.doAt(ctx, http.MethodGet, r.name, r.at, nil, map[string]string{"Range": rangeHeader(spans)}, 206, 200)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusOK {
		return r.unsupported()
	}
	fill := newRangeFill(spans, r.info.Size)
	switch err = fill.answer(resp); {
	case errors.Is(err, errTooMuch):
	case err != nil:
		return &store.PathError{Op: "readv", Path: r.name, Err: fmt.Errorf("%w: %w", store.ErrIO, err)}
	case fill.complete():
		return nil
	}
	return r.unsupported()
}

// rangeHeader is the Range header asking for spans.
func rangeHeader(spans []span) string {
	var b strings.Builder
	b.WriteString("bytes=")
	for i, s := range spans {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(s.off, 10) + "-" + strconv.FormatInt(s.end()-1, 10))
	}
	return b.String()
}

// unsupported remembers that the server answers multi-range requests
// with something else than the ranges asked, and is ReadV's answer from
// then on.
func (r *file) unsupported() error {
	r.fs.noMultiRange.Store(true)
	return &store.PathError{Op: "readv", Path: r.name, Err: fmt.Errorf("%w (%w): %s does not answer multi-range requests with the ranges asked", store.ErrUnsupported, errors.ErrUnsupported, r.fs.base.Host)}
}
