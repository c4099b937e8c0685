// Package accesslog writes one line per transfer: a root:// file from
// open to close, an https GET or PUT. A line says when it ended, over
// which protocol, for which client and identity (issuer, subject, VO,
// how it was proven and, for X.509, its VOMS FQANs, the primary first),
// the path, the bytes moved, how long it took and how it ended, as text
// (key=value) or JSON. The file is opened for appending and reopened when
// it is renamed or removed (logrotate's default), so rotation needs no
// signal; "stderr" writes to the standard error.
package accesslog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sitebox/internal/store"
)

// Entry is one transfer.
type Entry struct {
	Time     time.Time // when it ended
	Proto    string    // "root" or "https"
	Op       string    // "read", "write" (root://), "GET", "PUT" (https)
	Client   string    // the client's address
	Auth     string    // how the identity was proven (auth.Method*; "" anonymous)
	Issuer   string    // of the client's identity ("" anonymous)
	Subject  string    // token sub, Kerberos user, X.509 DN
	VO       string
	FQANs    []string // an X.509 identity's VOMS attributes
	Path     string
	Bytes    int64
	Duration time.Duration
	Result   string // "ok", or what went wrong
}

// FromRequest fills the who of e from the frontend's request.
func (e *Entry) FromRequest(r *store.Request) {
	if r == nil {
		return
	}
	e.Client, e.VO = r.Client, r.ClientVO()
	if id := r.Identity; id != nil {
		e.Auth, e.Issuer, e.Subject, e.FQANs = id.Method, id.Issuer, id.Subject, id.FQANs
	}
}

// Sink takes finished transfers; *Log implements it. The frontends take
// one (nil: no access log).
type Sink interface {
	Transfer(e Entry)
}

// SinkFunc makes a function a Sink.
type SinkFunc func(e Entry)

// Transfer calls f(e).
func (f SinkFunc) Transfer(e Entry) { f(e) }

// reopenCheck is how often the file's name is checked for a rotation.
const reopenCheck = time.Second

// Log is an access log. It is safe for concurrent use.
type Log struct {
	path string // "" for a stream
	json bool

	mu      sync.Mutex
	w       io.Writer
	f       *os.File // nil for a stream
	checked time.Time
	failed  bool // the last write failed (reported once)
	onError func(error)
}

// Open opens the access log at dest ("stderr" or a file path) in format
// "text" (default) or "json". onError hears of write failures (once per
// run of failures); nil ignores them.
func Open(dest, format string, onError func(error)) (*Log, error) {
	if format != "" && format != "text" && format != "json" {
		return nil, fmt.Errorf("access log format %q: use \"text\" or \"json\"", format)
	}
	l := &Log{json: format == "json", onError: onError}
	if dest == "stderr" {
		l.w = os.Stderr
		return l, nil
	}
	l.path = dest
	if err := l.reopen(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) reopen() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("access log: %w", err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.w = f, f
	return nil
}

// rotated reports whether the file at path is no longer the one open.
func (l *Log) rotated() bool {
	var now, open syscall.Stat_t
	if syscall.Stat(l.path, &now) != nil || syscall.Fstat(int(l.f.Fd()), &open) != nil {
		return true
	}
	return now.Ino != open.Ino || now.Dev != open.Dev
}

// Transfer writes e as one line.
func (l *Log) Transfer(e Entry) {
	line := l.format(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil && time.Since(l.checked) >= reopenCheck {
		l.checked = time.Now()
		if l.rotated() {
			if err := l.reopen(); err != nil {
				l.report(err)
			}
		}
	}
	if _, err := l.w.Write(line); err != nil {
		l.report(err)
		return
	}
	l.failed = false
}

func (l *Log) report(err error) {
	if !l.failed && l.onError != nil {
		l.onError(err)
	}
	l.failed = true
}

// Reopen reopens the file (after a rotation that copies, say).
func (l *Log) Reopen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.reopen()
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.w = nil, io.Discard
	return err
}

// record is an Entry as JSON: each key once.
type record struct {
	Time     string   `json:"time"`
	Proto    string   `json:"proto"`
	Op       string   `json:"op"`
	Client   string   `json:"client"`
	Auth     string   `json:"auth,omitempty"`
	Issuer   string   `json:"issuer,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	VO       string   `json:"vo,omitempty"`
	FQANs    []string `json:"fqans,omitempty"`
	Path     string   `json:"path"`
	Bytes    int64    `json:"bytes"`
	Duration float64  `json:"duration_s"`
	Result   string   `json:"result"`
}

func (l *Log) format(e Entry) []byte {
	ts := e.Time.UTC().Format(time.RFC3339Nano)
	secs := e.Duration.Seconds()
	if l.json {
		b, err := json.Marshal(record{Time: ts, Proto: e.Proto, Op: e.Op, Client: e.Client, Auth: e.Auth, Issuer: e.Issuer, Subject: e.Subject,
			VO: e.VO, FQANs: e.FQANs, Path: e.Path, Bytes: e.Bytes, Duration: secs, Result: e.Result})
		if err != nil {
			b = []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
		}
		return append(b, '\n')
	}
	var sb strings.Builder
	sb.WriteString("time=" + ts)
	// FQANs are joined with commas, which no FQAN holds.
	for _, kv := range [][2]string{{"proto", e.Proto}, {"op", e.Op}, {"client", e.Client}, {"auth", e.Auth}, {"issuer", e.Issuer},
		{"subject", e.Subject}, {"vo", e.VO}, {"fqans", strings.Join(e.FQANs, ",")}, {"path", e.Path}} {
		if kv[1] != "" || kv[0] == "path" {
			sb.WriteString(" " + kv[0] + "=" + quote(kv[1]))
		}
	}
	sb.WriteString(" bytes=" + strconv.FormatInt(e.Bytes, 10))
	sb.WriteString(" duration=" + strconv.FormatFloat(secs, 'f', 3, 64) + "s")
	sb.WriteString(" result=" + quote(e.Result) + "\n")
	return []byte(sb.String())
}

// quote leaves plain values bare and quotes those with blanks, quotes,
// '=' or control characters, so every line splits the same way (a path
// cannot forge a field).
func quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '=' || r == 0x7f || r > 0x7e }) {
		return s
	}
	return strconv.Quote(s)
}

// Result is the result word for an error: "ok" for nil.
func Result(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *store.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
