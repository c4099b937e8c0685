package davclient

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// span is one range a read asked for: len(buf) bytes from off.
type span struct {
	off int64
	buf []byte
}

func (s span) end() int64 { return s.off + int64(len(s.buf)) }

// errTooMuch says an answer carries far more bytes than were asked for: a
// server that merged scattered ranges into one spanning the file between
// them. The read goes again as single ranges rather than read it all.
var errTooMuch = errors.New("answer carries far more bytes than asked")

// rangeFill copies the parts of a 206 answer (each a Content-Range and
// its bytes) into the spans asked for, and tells whether every byte
// asked came. Parts may come in any order, merged or overlapping
// (RFC 9110 allows a server both); bytes of a part no span asked for are
// skipped.
type rangeFill struct {
	spans []span // sorted by offset, not overlapping
	size  int64  // the file's size when it was opened
	limit int64  // most bytes of parts to accept (see errTooMuch)
	read  int64  // bytes of parts so far
	got   [][2]int64
}

func newRangeFill(spans []span, size int64) *rangeFill {
	var asked int64
	for _, s := range spans {
		asked += int64(len(s.buf))
	}
	return &rangeFill{spans: spans, size: size, limit: 2*asked + 1<<20}
}

// part reads one part's bytes from body, contentRange saying which.
func (f *rangeFill) part(contentRange string, body io.Reader) error {
	first, last, err := parseContentRange(contentRange, f.size)
	if err != nil {
		return err
	}
	n := last - first + 1
	if f.read += n; f.read > f.limit {
		return fmt.Errorf("%w (%d bytes for %d asked)", errTooMuch, f.read, f.limit/2)
	}
	pos := first
	i := sort.Search(len(f.spans), func(i int) bool { return f.spans[i].end() > first })
	for ; i < len(f.spans) && f.spans[i].off <= last; i++ {
		s := f.spans[i]
		lo, hi := max(first, s.off), min(last+1, s.end())
		if err := skip(body, lo-pos); err != nil {
			return err
		}
		if _, err := io.ReadFull(body, s.buf[lo-s.off:hi-s.off]); err != nil {
			return fmt.Errorf("part %s ended early: %w", contentRange, noEOF(err))
		}
		f.got = append(f.got, [2]int64{lo, hi})
		pos = hi
	}
	return skip(body, last+1-pos)
}

// complete reports whether the parts covered every span.
func (f *rangeFill) complete() bool {
	slices.SortFunc(f.got, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var merged [][2]int64
	for _, g := range f.got {
		if k := len(merged) - 1; k >= 0 && g[0] <= merged[k][1] {
			merged[k][1] = max(merged[k][1], g[1])
			continue
		}
		merged = append(merged, g)
	}
	for _, s := range f.spans {
		k := sort.Search(len(merged), func(k int) bool { return merged[k][1] > s.off })
		if len(s.buf) > 0 && (k == len(merged) || merged[k][0] > s.off || merged[k][1] < s.end()) {
			return false
		}
	}
	return true
}

// answer reads a 206 answer's parts: one, or multipart/byteranges.
func (f *rangeFill) answer(resp *http.Response) error {
	if mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "multipart/byteranges" {
		return readByteranges(resp.Body, params["boundary"], f)
	}
	return f.part(resp.Header.Get("Content-Range"), resp.Body)
}

func skip(r io.Reader, n int64) error {
	if n <= 0 {
		return nil
	}
	if _, err := io.CopyN(io.Discard, r, n); err != nil {
		return fmt.Errorf("answer ended early: %w", noEOF(err))
	}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseContentRange parses "bytes FIRST-LAST/SIZE" and checks it lies in
// a file of size bytes: a SIZE other than that is the file changed since
// it was opened, and its bytes must not be mixed with what was read
// before ("*" is an unknown size, allowed).
func parseContentRange(v string, size int64) (first, last int64, err error) {
	bad := func(why string) (int64, int64, error) {
		return 0, 0, fmt.Errorf("Content-Range %q: %s", v, why)
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !ok {
		return bad("not bytes FIRST-LAST/SIZE")
	}
	r, total, ok := strings.Cut(rest, "/")
	a, b, ok2 := strings.Cut(r, "-")
	if !ok || !ok2 {
		return bad("not bytes FIRST-LAST/SIZE")
	}
	first, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	last, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return bad("not a range")
	}
	if total = strings.TrimSpace(total); total != "*" {
		n, err := strconv.ParseInt(total, 10, 64)
		if err != nil {
			return bad("not a size")
		}
		if n != size {
			return bad(fmt.Sprintf("the file is now %d bytes, %d when opened", n, size))
		}
	}
	if last >= size {
		return bad(fmt.Sprintf("past the end of a %d-byte file", size))
	}
	return first, last, nil
}

// Bounds on the text around a multipart answer's parts, so a server
// cannot make the client hold an endless header line.
const (
	maxPartLine  = 1 << 10
	maxPartLines = 16
)

// readByteranges reads a multipart/byteranges body into fill. A part's
// length comes from its Content-Range, not from searching for the
// boundary: XrdHttp's boundary is the fixed "123456", which a file's
// bytes may well contain.
func readByteranges(body io.Reader, boundary string, fill *rangeFill) error {
	if boundary == "" {
		return errors.New("multipart/byteranges without a boundary")
	}
	br := bufio.NewReaderSize(body, 4<<10)
	delim := "--" + boundary
	// XrdHttp starts with an empty line, net/http with the delimiter; a
	// preamble is allowed, if short.
	for n := 0; ; n++ {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if line == delim {
			break
		}
		if n == maxPartLines {
			return fmt.Errorf("no multipart boundary %q in the first %d lines", boundary, maxPartLines)
		}
	}
	for parts := 1; ; parts++ {
		// A server may split a range, but not into many parts each: the
		// parts' headers are work the byte count does not bound.
		if parts > 4*len(fill.spans) {
			return fmt.Errorf("%w (%d parts for %d ranges)", errTooMuch, parts, len(fill.spans))
		}
		cr, err := partRange(br)
		if err != nil {
			return err
		}
		if err := fill.part(cr, br); err != nil {
			return err
		}
		line, err := readLine(br) // the CRLF ending the part's bytes
		if err == nil && line == "" {
			line, err = readLine(br)
		}
		if err != nil {
			return err
		}
		switch line {
		case delim:
		case delim + "--":
			return nil
		default:
			return fmt.Errorf("multipart: %.40q where the boundary was due", line)
		}
	}
}

// partRange reads a part's header lines and returns its Content-Range.
func partRange(br *bufio.Reader) (string, error) {
	cr := ""
	for range maxPartLines {
		line, err := readLine(br)
		if err != nil {
			return "", err
		}
		if line == "" {
			if cr == "" {
				return "", errors.New("multipart part without a Content-Range")
			}
			return cr, nil
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Range") {
			cr = strings.TrimSpace(v)
		}
	}
	return "", fmt.Errorf("multipart part header over %d lines", maxPartLines)
}

// readLine reads a line of at most maxPartLine bytes, without its CRLF
// (or LF) and trailing blanks (RFC 2046 allows them after a boundary).
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) > maxPartLine {
			return "", fmt.Errorf("multipart line over %d bytes", maxPartLine)
		}
		b = append(b, chunk...)
		switch {
		case err == nil:
			return strings.TrimRight(string(b), " \t\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		}
		return "", fmt.Errorf("multipart answer ended early: %w", noEOF(err))
	}
}
