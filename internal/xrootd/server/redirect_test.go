package server

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
	"sitebox/internal/xrootd/xrdtest"
)

func wantRedirect(t *testing.T, what string, st uint16, body []byte, port int, host string) {
	t.Helper()
	if st != proto.StatusRedirect {
		c, m := errOf(body)
		t.Fatalf("%s: status %d (%d %s), want kXR_redirect", what, st, c, m)
	}
	if len(body) < 4 || int(int32(binary.BigEndian.Uint32(body))) != port || string(body[4:]) != host {
		t.Fatalf("%s: redirect body %q, want port %d and %q", what, body, port, host)
	}
}

// Every request that names a path is redirected, with the body XrdCl
// reads: int32 port, then "host?opaque" without a NUL.
func TestRedirectEveryPathRequest(t *testing.T) {
	origin, _ := newOriginStore(t, false)
	rs := &xrdtest.RouteStore{Store: origin, Decide: xrdtest.RedirectAll([]store.Endpoint{{Root: "127.0.0.1:2000"}}, "vo=cms&sbx.hops=1")}
	addr := startServer(t, Config{}, rs)
	r := login(t, addr)
	body := func(f func(b *[16]byte)) [16]byte {
		var b [16]byte
		if f != nil {
			f(&b)
		}
		return b
	}
	query := func(qt uint16) [16]byte { return body(func(b *[16]byte) { binary.BigEndian.PutUint16(b[0:], qt) }) }
	truncate := body(func(b *[16]byte) { binary.BigEndian.PutUint64(b[4:], 10) })
	mv := body(func(b *[16]byte) { binary.BigEndian.PutUint16(b[14:], 2) })
	for _, tc := range []struct {
		name string
		id   uint16
		body [16]byte
		data string
	}{
		{"open read", proto.ReqOpen, body(func(b *[16]byte) { binary.BigEndian.PutUint16(b[2:], proto.OpenRead) }), "/f"},
		{"open new", proto.ReqOpen, body(func(b *[16]byte) { binary.BigEndian.PutUint16(b[2:], proto.OpenNew) }), "/f"},
		{"stat", proto.ReqStat, [16]byte{}, "/f"},
		{"stat vfs", proto.ReqStat, body(func(b *[16]byte) { b[0] = proto.StatVFS }), "/f"},
		{"statx", proto.ReqStatx, [16]byte{}, "/f\n/g"},
		{"dirlist", proto.ReqDirlist, [16]byte{}, "/d"},
		{"locate", proto.ReqLocate, [16]byte{}, "*/f"},
		{"query checksum", proto.ReqQuery, query(proto.QueryCksum), "/f?cks.type=adler32"},
		{"query space", proto.ReqQuery, query(proto.QuerySpace), "/f"},
		{"mkdir", proto.ReqMkdir, [16]byte{}, "/d"},
		{"rm", proto.ReqRm, [16]byte{}, "/f"},
		{"rmdir", proto.ReqRmdir, [16]byte{}, "/d"},
		{"mv", proto.ReqMv, mv, "/f /g"},
		{"chmod", proto.ReqChmod, [16]byte{}, "/f"},
		{"truncate by path", proto.ReqTruncate, truncate, "/f"},
		{"prepare", proto.ReqPrepare, [16]byte{}, "/f\n"},
	} {
		st, b := r.call(tc.id, tc.body, []byte(tc.data))
		wantRedirect(t, tc.name, st, b, 2000, "127.0.0.1?vo=cms&sbx.hops=1")
	}
	// The session carries on normally after its requests were diverted.
	if st, _ := r.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
		t.Fatalf("ping after redirects: status %d", st)
	}
}

// The first endpoint with a root:// address is used; an IPv6 host is put
// in brackets, as XrdCl parses the redirect as a URL; no CGI, no '?'.
// With no root:// endpoint at all the client gets a clear error.
func TestRedirectTarget(t *testing.T) {
	origin, _ := newOriginStore(t, false)
	rs := &xrdtest.RouteStore{Store: origin}
	addr := startServer(t, Config{}, rs)
	r := login(t, addr)
	setTo := func(to []store.Endpoint) { rs.SetRoute(xrdtest.RedirectAll(to, "")) }

	setTo([]store.Endpoint{{HTTPS: "https://b.example:8443"}, {Root: "bad"}, {Root: "root://[::1]:1095/", HTTPS: "https://c.example:8443"}})
	st, b := r.call(proto.ReqStat, [16]byte{}, []byte("/f"))
	wantRedirect(t, "ipv6", st, b, 1095, "[::1]")

	setTo([]store.Endpoint{{HTTPS: "https://b.example:8443"}})
	st, b = r.call(proto.ReqStat, [16]byte{}, []byte("/f"))
	r.wantErr("https only", st, b, proto.ErrServerError)
	if _, msg := errOf(b); !strings.Contains(msg, "https://b.example:8443") || !strings.Contains(msg, "root://") {
		t.Fatalf("https-only redirect error %q does not say where the file is", msg)
	}

	setTo([]store.Endpoint{{Root: "host:0"}, {Root: "host:99999"}, {Root: "ho st:1"}})
	st, b = r.call(proto.ReqStat, [16]byte{}, []byte("/f"))
	r.wantErr("bad endpoints", st, b, proto.ErrServerError)
}

func TestRedirectBodyRefusesControlBytes(t *testing.T) {
	_, err := redirectBody(store.Route{To: []store.Endpoint{{Root: "a:1"}}, Opaque: "x=1\x00y"}, store.Call{Op: "open", Path: "/f"})
	if err == nil {
		t.Fatal("a CGI with a NUL was sent")
	}
	b, err := redirectBody(store.Route{To: []store.Endpoint{{Root: "a:1"}}, Opaque: "?x=1"}, store.Call{Op: "open", Path: "/f"})
	if err != nil || !bytes.Equal(b[4:], []byte("a?x=1")) {
		t.Fatalf("leading '?' kept: %q %v", b, err)
	}
}

// kXR_wait carries whole seconds, at least one, then the reason.
func TestWaitAnswer(t *testing.T) {
	origin, _ := newOriginStore(t, false)
	rs := &xrdtest.RouteStore{Store: origin}
	addr := startServer(t, Config{}, rs)
	r := login(t, addr)
	for _, tc := range []struct {
		wait time.Duration
		secs int32
	}{{0, 1}, {300 * time.Millisecond, 1}, {2500 * time.Millisecond, 3}, {time.Hour, maxWaitSecs}} {
		rs.SetRoute(func(op, name string) (store.Route, error) {
			return store.Route{Retry: true, Wait: tc.wait, Reason: "searching the federation"}, nil
		})
		st, b := r.call(proto.ReqOpen, [16]byte{}, []byte("/f"))
		if st != proto.StatusWait || len(b) < 4 {
			t.Fatalf("wait %v: status %d body %q", tc.wait, st, b)
		}
		if got := int32(binary.BigEndian.Uint32(b)); got != tc.secs || string(b[4:]) != "searching the federation" {
			t.Fatalf("wait %v: answered %d s %q, want %d s", tc.wait, got, b[4:], tc.secs)
		}
	}
}

// The store sees who asks and the path's CGI, for every path request.
func TestRequestInContext(t *testing.T) {
	origin, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "f"), []byte("hello"))
	rs := &xrdtest.RouteStore{Store: origin}
	addr := startServer(t, Config{}, rs)
	r := login(t, addr)
	var ob [16]byte
	binary.BigEndian.PutUint16(ob[2:], proto.OpenRead)
	if st, b := r.call(proto.ReqOpen, ob, []byte("/f?vo=cms&authz=tok&x=%41")); st != proto.StatusOK {
		t.Fatalf("open: %d %q", st, b)
	}
	c := rs.Last("open")
	if c == nil || c.Name != "/f" {
		t.Fatalf("open not seen: %+v", c)
	}
	q := c.Req
	if q.Client != "127.0.0.1" || q.VO != "cms" || q.Proto != "root" || q.Opaque.Get("authz") != "tok" || q.Opaque.Get("x") != "A" {
		t.Fatalf("store saw %+v", q)
	}
	var mb [16]byte
	binary.BigEndian.PutUint16(mb[14:], uint16(len("/f?a=1")))
	if st, b := r.call(proto.ReqMv, mb, []byte("/f?a=1 /g?sbx.hops=2")); st != proto.StatusOK {
		t.Fatalf("mv: %d %q", st, b)
	}
	if c := rs.Last("mv"); c == nil || c.Req.Opaque.Get("a") != "1" || c.Req.Opaque.Get("sbx.hops") != "2" {
		t.Fatalf("mv: store saw %+v", c)
	}
	if st, _ := r.call(proto.ReqStat, [16]byte{}, []byte("/g")); st != proto.StatusOK {
		t.Fatal("stat after mv failed")
	}
	if c := rs.Last("stat"); c == nil || len(c.Req.Opaque) != 0 || c.Req.Client != "127.0.0.1" {
		t.Fatalf("stat without CGI: store saw %+v", c)
	}
}

// Locate lists every location the store gives, in XrdCl's format.
func TestLocateReplicas(t *testing.T) {
	origin, _ := newOriginStore(t, false)
	rs := &xrdtest.RouteStore{Store: origin, Locs: []store.Location{
		{Endpoint: "127.0.0.1:1111"},
		{Endpoint: "[::1]:2222", Writable: true},
		{Endpoint: "dir.example:1094", Manager: true},
	}}
	addr := startServer(t, Config{}, rs)
	r := login(t, addr)
	st, b := r.call(proto.ReqLocate, [16]byte{}, []byte("*/f?vo=cms"))
	if st != proto.StatusOK || string(b) != "Sr127.0.0.1:1111 Sw[::1]:2222 Mrdir.example:1094\x00" {
		t.Fatalf("locate: %d %q", st, b)
	}
	if c := rs.Last("locate"); c == nil || c.Name != "/f" || c.Req.VO != "cms" {
		t.Fatalf("locate: store saw %+v", c)
	}
}

// A client the namespace policy refuses gets kXR_NotAuthorized, never a
// redirect, for every read and upload: the router is not even asked.
func TestRefusedClientIsNotRedirected(t *testing.T) {
	origin, _ := newOriginStore(t, false)
	rs := &xrdtest.RouteStore{Store: origin, Decide: xrdtest.RedirectAll([]store.Endpoint{{Root: "127.0.0.1:2000"}}, "")}
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/", Read: auth.ReadToken, Write: auth.WriteToken}})
	if err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, Config{}, auth.NewGuard(rs, p, nil))
	r := login(t, addr)
	flags := func(f uint16) [16]byte {
		var b [16]byte
		binary.BigEndian.PutUint16(b[2:], f)
		return b
	}
	var cksum [16]byte
	binary.BigEndian.PutUint16(cksum[0:], proto.QueryCksum)
	for _, tc := range []struct {
		name string
		id   uint16
		body [16]byte
		data string
	}{
		{"open read", proto.ReqOpen, flags(proto.OpenRead), "/f"},
		{"open new", proto.ReqOpen, flags(proto.OpenNew), "/f"},
		{"stat", proto.ReqStat, [16]byte{}, "/f"},
		{"dirlist", proto.ReqDirlist, [16]byte{}, "/d"},
		{"locate", proto.ReqLocate, [16]byte{}, "/f"},
		{"query checksum", proto.ReqQuery, cksum, "/f?cks.type=adler32"},
	} {
		st, b := r.call(tc.id, tc.body, []byte(tc.data))
		if c, _ := errOf(b); st != proto.StatusError || c != proto.ErrNotAuthorized {
			t.Errorf("%s by an anonymous client: status %d (%q), want kXR_NotAuthorized", tc.name, st, b)
		}
	}
	if calls := rs.Calls(); len(calls) != 0 {
		t.Errorf("the router was asked about a refused client's requests: %+v", calls)
	}
}
