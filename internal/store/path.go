package store

import (
	"fmt"
	"sort"
	"strings"
)

// MaxPathLen bounds the length of a namespace path; longer ones are refused
// before any filesystem call (PATH_MAX on Linux is 4096).
const MaxPathLen = 4096

// MaxNameLen bounds one element of a path (NAME_MAX on Linux): no POSIX
// filesystem holds a longer name, so every store gets the same answer
// for one, whether it would ask a disk or an upstream server.
const MaxNameLen = 255

// CleanPath turns a client-supplied path into the canonical namespace form:
// absolute, slash-separated, no empty, "." or ".." elements, no trailing
// slash (except the root "/"). Repeated slashes collapse ("//store" is
// "/store"). ".." is refused rather than resolved so that no spelling of a
// path can climb out of an export, and NUL or other control bytes are
// refused because the OS would truncate or misread them. A path longer
// than MaxPathLen, or with an element longer than MaxNameLen, is
// ErrNameTooLong.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", &PathError{Op: "path", Path: p, Err: fmt.Errorf("%w: empty path", ErrInvalid)}
	}
	if len(p) > MaxPathLen {
		return "", &PathError{Op: "path", Path: p[:64] + "…", Err: fmt.Errorf("%w: path longer than %d bytes", ErrNameTooLong, MaxPathLen)}
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return "", &PathError{Op: "path", Path: strings.ToValidUTF8(strings.Map(visible, p), "?"), Err: fmt.Errorf("%w: control byte 0x%02x in path", ErrInvalid, c)}
		}
	}
	var b strings.Builder
	b.Grow(len(p) + 1)
	for _, elem := range strings.Split(p, "/") {
		switch elem {
		case "", ".":
			continue
		case "..":
			return "", &PathError{Op: "path", Path: p, Err: fmt.Errorf("%w: '..' is not allowed in paths", ErrInvalid)}
		}
		if len(elem) > MaxNameLen {
			return "", &PathError{Op: "path", Path: elem[:64] + "…", Err: fmt.Errorf("%w: a name of %d bytes (the limit is %d)", ErrNameTooLong, len(elem), MaxNameLen)}
		}
		b.WriteByte('/')
		b.WriteString(elem)
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}

func visible(r rune) rune {
	if r < 0x20 || r == 0x7f {
		return '?'
	}
	return r
}

// HasPrefix reports whether the clean path p is prefix or lies below it, by
// whole elements: "/store/ab" is not below "/store/a".
func HasPrefix(p, prefix string) bool {
	if prefix == "/" {
		return true
	}
	return p == prefix || strings.HasPrefix(p, prefix) && p[len(prefix)] == '/'
}

// SplitOpaque separates a path from its "?cgi" opaque part, as both XRootD
// and HTTP clients send them. The opaque part never becomes part of the path.
func SplitOpaque(s string) (path, opaque string) {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// ChildrenBelow returns, sorted and once each, the next path element of
// every prefix strictly below p: what p lists as directories when only
// deeper prefixes are mounted ("/" shows "store" for "/store/user").
func ChildrenBelow(p string, prefixes []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, pre := range prefixes {
		if pre == p || !HasPrefix(pre, p) {
			continue
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(pre, p), "/")
		child, _, _ := strings.Cut(rest, "/")
		if !seen[child] {
			seen[child] = true
			out = append(out, child)
		}
	}
	sort.Strings(out)
	return out
}
