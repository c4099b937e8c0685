package webdav

// escapePath writes a clean namespace path as the path of a URL,
// escaping only what RFC 3986 requires: every byte of a segment that is
// not a pchar (unreserved, sub-delims, ":" and "@") is percent-encoded,
// and the "/" between segments is kept. davix and gfal2 show the hrefs
// of a listing as they come and build the next URL from them, so a name
// with "(", "'" or "!" is listed and copied under its own name; a space,
// "%", "#", "?", a non-ASCII byte and the like must be escaped for the
// href to be a URL at all (davix refuses such a URL otherwise).
func escapePath(p string) string {
	const hexDigits = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(p); i++ {
		if !inPath(p[i]) {
			n++
		}
	}
	if n == 0 {
		return p
	}
	b := make([]byte, 0, len(p)+2*n)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if inPath(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return string(b)
}

// inPath reports whether c may stand for itself in an absolute path:
// a pchar of RFC 3986 section 3.3, or the separator.
func inPath(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', // unreserved
		'!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', // sub-delims
		':', '@', '/':
		return true
	}
	return false
}
