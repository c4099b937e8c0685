package client

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"sitebox/internal/xrootd/proto"
)

// Error is a kXR_error answer. It unwraps to the matching store sentinel so
// callers can test errors.Is(err, store.ErrNotFound) whatever the protocol.
type Error struct {
	Code int32
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("[%d] %s", e.Code, e.Msg) }

// Unwrap maps the code to a store sentinel (proto.StoreCodes).
func (e *Error) Unwrap() error { return proto.StoreCodes.ErrOf(e.Code) }

func parseError(b []byte) error {
	if len(b) < 4 {
		return &Error{Code: proto.ErrServerError, Msg: "malformed error response"}
	}
	return &Error{Code: int32(binary.BigEndian.Uint32(b[:4])), Msg: strings.TrimRight(string(b[4:]), "\x00\n ")}
}

// Redirect is a kXR_redirect answer: retry at Host:Port with Opaque CGI.
type Redirect struct {
	Host   string
	Port   int
	Opaque string
}

func (r *Redirect) Error() string { return "redirected to " + r.Addr() }

// Addr is "host:port".
func (r *Redirect) Addr() string { return joinHostPort(r.Host, r.Port) }

func joinHostPort(h string, p int) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(p)
}

func parseRedirect(b []byte) error {
	if len(b) < 4 {
		return &Error{Code: proto.ErrServerError, Msg: "malformed redirect response"}
	}
	port := int(int32(binary.BigEndian.Uint32(b[:4])))
	host, opaque, _ := strings.Cut(strings.TrimRight(string(b[4:]), "\x00"), "?")
	if port <= 0 { // a URL form: root://host:port/...
		return &Error{Code: proto.ErrUnsupported, Msg: "URL redirects are not supported: " + trimForMsg(host)}
	}
	// XrdCl builds "host:port/" from the answer, with IPv6 in brackets.
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if port > 65535 || host == "" || strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '/' }) {
		return &Error{Code: proto.ErrServerError, Msg: fmt.Sprintf("malformed redirect to %q port %d", trimForMsg(host), port)}
	}
	return &Redirect{Host: host, Port: port, Opaque: opaque}
}

// trimForMsg shortens text from a server for an error message.
func trimForMsg(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
