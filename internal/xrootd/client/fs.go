package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitebox/internal/cksum"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// FS is a store.Store (and store.Namespace) over one root:// server or
// director. Connections are made on first use, shared by all calls, and
// re-dialled after a drop. Names may carry CGI ("/f?vo=cms"), sent with
// the cleaned path; redirects and waits are followed (see do). Safe for
// concurrent use.
type FS struct {
	addr string
	opts Options // for every server, redirect targets included

	mu    sync.Mutex
	conns map[string]*Conn
	// down holds the servers an operation waited for in vain
	// (Options.Reconnect): until one is reached again, a request that
	// cannot reach it fails at once instead of waiting the budget again.
	down outbound.Unreached
}

var (
	_ store.Store     = (*FS)(nil)
	_ store.Namespace = (*FS)(nil)
)

// NewFS returns a client for the server at addr ("host:port").
func NewFS(addr string) *FS { return NewFSOptions(addr, Options{}) }

// NewFSOptions is NewFS with TLS (roots://) and a bearer token, used for
// the servers redirects lead to as well, as XrdCl keeps roots:// across
// redirects.
func NewFSOptions(addr string, opts Options) *FS {
	return &FS{addr: addr, opts: opts, conns: map[string]*Conn{}}
}

// Close drops every connection.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, c := range f.conns {
		c.Close()
		delete(f.conns, k)
	}
	return nil
}

// Connected reports whether a live connection to the server is open, so
// a request now costs no dial and login (two round trips or more).
func (f *FS) Connected() bool {
	f.mu.Lock()
	c := f.conns[f.addr]
	f.mu.Unlock()
	return c != nil && c.Err() == nil
}

// Connect dials the server and logs in unless a live connection is open
// already, so the first request pays no dial.
func (f *FS) Connect(ctx context.Context) error {
	_, err := f.conn(ctx, f.addr)
	return err
}

func (f *FS) conn(ctx context.Context, addr string) (*Conn, error) {
	f.mu.Lock()
	c := f.conns[addr]
	f.mu.Unlock()
	if c != nil && c.Err() == nil && !f.stale(c) {
		return c, nil
	}
	// A server that takes the connection but never answers (stopped, a
	// black hole) fails the dial within the I/O timeout, as it would
	// a request.
	dctx, cancel := context.WithTimeout(ctx, f.opts.ioTimeout())
	nc, err := DialOptions(dctx, addr, f.opts)
	cancel()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down.Answered(addr)
	if old := f.conns[addr]; old != nil && old.Err() == nil {
		if old.cred == nc.cred {
			nc.Close()
			return old, nil
		}
		old.retire() // logged in with a proxy since replaced
	}
	f.conns[addr] = nc
	return nc, nil
}

func pathOp(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &store.PathError{Op: op, Path: name, Err: err}
}

// Stat describes a file or directory.
func (f *FS) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	r, err := newPathReq("stat", proto.ReqStat, [16]byte{}, name)
	if err != nil {
		return store.FileInfo{}, err
	}
	resp, _, err := f.do(ctx, r)
	if err != nil {
		return store.FileInfo{}, pathOp("stat", r.path, err)
	}
	fi, err := parseStat(baseName(r.path), string(resp))
	return fi, pathOp("stat", r.path, err)
}

// List lists a directory with stat information (kXR_dstat).
func (f *FS) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	var body [16]byte
	body[15] = proto.DirlistDstat
	r, err := newPathReq("list", proto.ReqDirlist, body, name)
	if err != nil {
		return nil, err
	}
	resp, _, err := f.do(ctx, r)
	if err != nil {
		return nil, pathOp("list", r.path, err)
	}
	out, err := parseDirlist(string(resp))
	for i := range out {
		// Each name on its own: a name kept (a mount's or a cache's
		// listing) must not keep the whole response with it.
		out[i].Name = strings.Clone(out[i].Name)
	}
	return out, pathOp("list", r.path, err)
}

// Checksum asks the server for the file's checksum.
func (f *FS) Checksum(ctx context.Context, name, algo string) (string, error) {
	algo, err := cksum.Normalize(algo)
	if err != nil {
		return "", err
	}
	var body [16]byte
	binary.BigEndian.PutUint16(body[0:2], proto.QueryCksum)
	r, err := newPathReq("checksum", proto.ReqQuery, body, name)
	if err != nil {
		return "", err
	}
	r.cgi = mergeCGI(r.cgi, "cks.type="+algo)
	resp, _, err := f.do(ctx, r)
	if err != nil {
		return "", pathOp("checksum", r.path, err)
	}
	got, val, ok := strings.Cut(strings.TrimRight(string(resp), "\x00\n "), " ")
	if !ok || !strings.EqualFold(got, algo) {
		return "", pathOp("checksum", r.path, fmt.Errorf("%w: server answered %q for %s", store.ErrIO, resp, algo))
	}
	// XRootD servers may drop leading zeros; normalise to 8 hex digits.
	val, err = cksum.Hex(algo, val)
	if err != nil {
		return "", pathOp("checksum", r.path, fmt.Errorf("%w: %v", store.ErrIO, err))
	}
	return val, nil
}

// Locate lists the servers holding name.
func (f *FS) Locate(ctx context.Context, name string) ([]store.Location, error) {
	r, err := newPathReq("locate", proto.ReqLocate, [16]byte{}, name)
	if err != nil {
		return nil, err
	}
	resp, _, err := f.do(ctx, r)
	if err != nil {
		return nil, pathOp("locate", r.path, err)
	}
	var out []store.Location
	for _, tok := range strings.Fields(strings.TrimRight(string(resp), "\x00")) {
		if len(tok) < 3 {
			continue
		}
		l := store.Location{Endpoint: tok[2:], Manager: tok[0] == 'M' || tok[0] == 'm', Writable: tok[1] == 'w'}
		out = append(out, l)
	}
	return out, nil
}

// parseStat reads "id size flags mtime [ctime atime mode owner group]".
func parseStat(name, s string) (store.FileInfo, error) {
	f := strings.Fields(strings.TrimRight(s, "\x00"))
	if len(f) < 4 {
		return store.FileInfo{}, fmt.Errorf("%w: malformed stat answer %q", store.ErrIO, s)
	}
	id, _ := strconv.ParseUint(f[0], 10, 64)
	size, err1 := strconv.ParseInt(f[1], 10, 64)
	flags, err2 := strconv.Atoi(f[2])
	mtime, err3 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return store.FileInfo{}, fmt.Errorf("%w: malformed stat answer %q", store.ErrIO, s)
	}
	fi := store.FileInfo{Name: name, Size: size, ID: id, ModTime: time.Unix(mtime, 0), Writable: flags&proto.StatFlagWritable != 0}
	var perm fs.FileMode
	if len(f) >= 7 {
		if m, err := strconv.ParseUint(f[6], 8, 32); err == nil {
			perm = fs.FileMode(m) & fs.ModePerm
		}
	}
	if perm == 0 {
		if flags&proto.StatFlagReadable != 0 {
			perm |= 0o444
		}
		if flags&proto.StatFlagWritable != 0 {
			perm |= 0o200
		}
		if flags&proto.StatFlagXset != 0 {
			perm |= 0o111
		}
	}
	fi.Mode = perm
	switch {
	case flags&proto.StatFlagIsDir != 0:
		fi.Mode |= fs.ModeDir
	case flags&proto.StatFlagOther != 0:
		fi.Mode |= fs.ModeIrregular
	}
	return fi, nil
}

// parseDirlist reads a kXR_dstat listing: a ".\n0 0 0 0" lead entry, then
// name and stat lines in turn.
func parseDirlist(s string) ([]store.FileInfo, error) {
	s = strings.TrimRight(s, "\x00\n")
	if s == "" {
		return nil, nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) >= 2 && lines[0] == "." && lines[1] == "0 0 0 0" {
		lines = lines[2:]
		if len(lines)%2 != 0 {
			return nil, fmt.Errorf("%w: malformed directory listing", store.ErrIO)
		}
		out := make([]store.FileInfo, 0, len(lines)/2)
		for i := 0; i < len(lines); i += 2 {
			fi, err := parseStat(lines[i], lines[i+1])
			if err != nil {
				return nil, err
			}
			out = append(out, fi)
		}
		return out, nil
	}
	out := make([]store.FileInfo, 0, len(lines))
	for _, n := range lines {
		out = append(out, store.FileInfo{Name: n})
	}
	return out, nil
}

func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
