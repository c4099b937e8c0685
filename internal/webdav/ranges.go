package webdav

import (
	"net/http"
	"strconv"
	"strings"
)

// normalizeRange rewrites a request's Range header into one that
// http.ServeContent answers as RFC 9110 asks, where it does not by
// itself:
//   - a Range on any method but GET, or in a unit other than bytes, is
//     ignored (the whole file, 200), not answered 206 or 416;
//   - a position past what an int64 holds is clamped: a last-byte-pos to
//     the end of the file, a suffix to the whole file, a first-byte-pos
//     (past any file) makes that range unsatisfiable;
//   - a suffix of zero bytes ("-0") is unsatisfiable, not a range of
//     nothing with an invalid Content-Range.
//
// When no range is left that could be satisfied, the header asks for
// one starting at the end of the file, which ServeContent answers 416
// with "Content-Range: bytes */size" (and If-Range still applies). A
// header that is malformed otherwise is left for ServeContent to refuse.
func normalizeRange(r *http.Request, size int64) {
	v := r.Header.Get("Range")
	if v == "" {
		return
	}
	unit, set, ok := strings.Cut(v, "=")
	if r.Method != http.MethodGet || !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		r.Header.Del("Range")
		return
	}
	var keep []string
	for _, spec := range strings.Split(set, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		first, last, ok := strings.Cut(spec, "-")
		if !ok || !digits(first) || !digits(last) || first == "" && last == "" {
			return // malformed: ServeContent refuses it
		}
		if kept, ok := normalizeSpec(first, last, size); ok {
			keep = append(keep, kept)
		}
	}
	if len(keep) == 0 {
		keep = []string{strconv.FormatInt(size, 10) + "-"}
	}
	r.Header.Set("Range", "bytes="+strings.Join(keep, ","))
}

// normalizeSpec is one range spec "first-last" clamped to what an int64
// holds, or not ok when it can never be satisfied.
func normalizeSpec(first, last string, size int64) (string, bool) {
	if first == "" { // a suffix: the last `last` bytes
		n, err := strconv.ParseInt(last, 10, 64)
		switch {
		case err != nil: // more bytes than any file has
			return "0-", true
		case n == 0:
			return "", false
		}
		return "-" + last, true
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a >= size {
		return "", false
	}
	if last == "" {
		return first + "-", true
	}
	if _, err := strconv.ParseInt(last, 10, 64); err != nil {
		return first + "-", true // to the end of the file
	}
	return first + "-" + last, true
}

// digits reports whether s holds only decimal digits ("" too).
func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
