// Package problem is what a role's config Validate reports: each thing
// wrong, named by its key, so the config file loader can add the line it
// is on and an operator can fix a file in one pass.
package problem

import (
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Problem is one thing wrong with a config file.
type Problem struct {
	Line int    // 1-based; 0 when the problem has no single place
	Key  string // e.g. "https.cert", "export[2].pools"
	Msg  string
}

func (p Problem) String() string {
	loc := ""
	if p.Line > 0 {
		loc = "line " + strconv.Itoa(p.Line) + ": "
	}
	if p.Key != "" {
		return loc + p.Key + ": " + p.Msg
	}
	return loc + p.Msg
}

// List collects problems under a section: Add("drop_after", …) on a List
// for "director" records the key "director.drop_after".
type List struct {
	Section string
	All     []Problem
}

// Add records a problem with key (relative to the section).
func (l *List) Add(key, format string, args ...any) {
	if l.Section != "" {
		key = l.Section + "." + key
	}
	l.All = append(l.All, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// CheckURL explains what is wrong with a server URL, or returns "".
func CheckURL(s string, schemes ...string) string {
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

// CheckAddr explains what is wrong with a listen address, or returns "".
// Empty and "off" (a listener switched off) are no address to check.
func CheckAddr(addr string) string {
	if addr == "" || addr == "off" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("%q is not host:port (e.g. \"0.0.0.0:1094\" or \":1094\"; \"off\" disables)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("port %q in %q is not a number from 0 to 65535", port, addr)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		if _, err := net.LookupHost(host); err != nil {
			return fmt.Sprintf("host %q in %q does not resolve", host, addr)
		}
	}
	return ""
}

// CheckLimit explains what is wrong with a limit setting, where 0 takes
// the default and -1 means no limit, or returns "".
func CheckLimit(v int) string {
	if v < -1 {
		return fmt.Sprintf("%d is not a limit (a positive number; 0 for the default, -1 for none)", v)
	}
	return ""
}

// CheckAtLeast explains why a duration setting is too short, or returns
// "".
func CheckAtLeast(d, least time.Duration) string {
	if d < least {
		return fmt.Sprintf("%q is not a duration of at least %v (e.g. \"1m\")", d.String(), least)
	}
	return ""
}
