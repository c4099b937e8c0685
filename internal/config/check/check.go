// Package check holds the small checks every role's config validation
// makes, so each role's Validate says the same thing the same way.
package check

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
)

// URL explains what is wrong with s as a URL of one of schemes with a
// host and port, or returns "".
func URL(s string, schemes ...string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Sprintf("%q is not a URL like %s://host:port", s, schemes[0])
	}
	for _, sc := range schemes {
		if u.Scheme == sc {
			if u.Port() == "" {
				return fmt.Sprintf("%q lacks a port", s)
			}
			return ""
		}
	}
	return fmt.Sprintf("%q: scheme must be %s", s, strings.Join(schemes, " or "))
}

// Readable explains why the file at path cannot be read, or returns "".
func Readable(path string) string {
	if _, err := os.Stat(path); err != nil {
		return fmt.Sprintf("cannot read %s: %v", path, PathCause(err))
	}
	return ""
}

// PathCause is err without the operation and path a *fs.PathError
// repeats, for messages that name the path already.
func PathCause(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
