package server

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// newOriginStore exports a fresh temporary directory as "/".
func newOriginStore(t *testing.T, readOnly bool) (store.Store, string) {
	t.Helper()
	return newOriginExport(t, t.TempDir(), readOnly)
}

// newOriginStoreAt exports dir as "/".
func newOriginStoreAt(tb testing.TB, dir string) (store.Store, string) {
	tb.Helper()
	return newOriginExport(tb, dir, false)
}

func newOriginExport(tb testing.TB, dir string, readOnly bool) (store.Store, string) {
	tb.Helper()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{dir}, ReadOnly: readOnly}}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { o.Close() })
	return o, dir
}

// startServer serves st on 127.0.0.1:0 until the test ends.
func startServer(t *testing.T, cfg Config, st store.Store) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(cfg, st, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// testEnv is a server over a temporary directory.
func testEnv(t *testing.T, cfg Config) (addr, dir string) {
	t.Helper()
	st, dir := newOriginStore(t, false)
	return startServer(t, cfg, st), dir
}

func writeTestFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// patterned returns n bytes that differ at every offset mod 251.
func patterned(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// rawConn speaks the protocol frame by frame, for tests of exact bytes and
// of bad input that real clients never send.
type rawConn struct {
	t    *testing.T
	c    net.Conn
	next uint16
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, next: 1}
}

// hello sends the client handshake and checks the server's answer.
func (r *rawConn) hello() {
	r.t.Helper()
	var hs [20]byte
	binary.BigEndian.PutUint32(hs[12:], 4)
	binary.BigEndian.PutUint32(hs[16:], 2012)
	r.raw(hs[:])
	h, body := r.recv()
	if h.Status != proto.StatusOK || len(body) != 8 || binary.BigEndian.Uint32(body[4:]) != proto.ServerTypeData {
		r.t.Fatalf("handshake answer %+v %x", h, body)
	}
}

// protocol sends kXR_protocol, as a client does after the handshake.
func (r *rawConn) protocol() {
	r.t.Helper()
	var pb [16]byte
	binary.BigEndian.PutUint32(pb[0:], proto.ProtocolVersion)
	if st, _ := r.call(proto.ReqProtocol, pb, nil); st != proto.StatusOK {
		r.t.Fatalf("protocol: status %d", st)
	}
}

// login performs hello, protocol and login.
func login(t *testing.T, addr string) *rawConn {
	t.Helper()
	r := dialRaw(t, addr)
	r.hello()
	r.protocol()
	var lb [16]byte
	copy(lb[4:], "tester")
	st, body := r.call(proto.ReqLogin, lb, nil)
	if st != proto.StatusOK || len(body) != 16 {
		t.Fatalf("login: status %d body %x", st, body)
	}
	return r
}

func (r *rawConn) raw(b []byte) {
	r.t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// send writes one request and returns its stream ID.
func (r *rawConn) send(id uint16, body [16]byte, data []byte) proto.StreamID {
	r.t.Helper()
	var sid proto.StreamID
	binary.BigEndian.PutUint16(sid[:], r.next)
	r.next++
	r.raw(proto.EncodeRequest(sid, id, body, data))
	return sid
}

// recv reads one response frame; kXR_status frames come with their data.
func (r *rawConn) recv() (proto.ResponseHeader, []byte) {
	r.t.Helper()
	h, body, err := r.tryRecv()
	if err != nil {
		r.t.Fatalf("read response: %v", err)
	}
	return h, body
}

func (r *rawConn) tryRecv() (proto.ResponseHeader, []byte, error) {
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	h, body, err := proto.ReadResponse(r.c, 64<<20)
	if err != nil || h.Status != proto.StatusStatus {
		return h, body, err
	}
	st, _, err := proto.ParseStatus(body)
	if err != nil {
		return h, body, err
	}
	data := make([]byte, st.DataLen)
	if _, err := readFull(r.c, data); err != nil {
		return h, body, err
	}
	return h, append(body, data...), nil
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// call sends a request and gathers its answer: the final status and the
// bodies of all its frames joined (kXR_oksofar data, kXR_status frames
// whole).
func (r *rawConn) call(id uint16, body [16]byte, data []byte) (uint16, []byte) {
	r.t.Helper()
	sid := r.send(id, body, data)
	return r.answer(sid)
}

func (r *rawConn) answer(sid proto.StreamID) (uint16, []byte) {
	r.t.Helper()
	var all []byte
	for {
		h, b := r.recv()
		if h.Stream != sid {
			r.t.Fatalf("answer for stream %x while waiting for %x", h.Stream, sid)
		}
		all = append(all, b...)
		if h.Status == proto.StatusOKSoFar {
			continue
		}
		if h.Status == proto.StatusStatus && b[7] == proto.RespPartial {
			continue
		}
		return h.Status, all
	}
}

// errOf decodes a kXR_error body.
func errOf(body []byte) (int32, string) {
	if len(body) < 4 {
		return 0, ""
	}
	msg := body[4:]
	if n := len(msg); n > 0 && msg[n-1] == 0 {
		msg = msg[:n-1]
	}
	return int32(binary.BigEndian.Uint32(body)), string(msg)
}

// wantErr checks that a call failed with code.
func (r *rawConn) wantErr(what string, st uint16, body []byte, code int32) {
	r.t.Helper()
	if st != proto.StatusError {
		r.t.Fatalf("%s: status %d, want kXR_error %d", what, st, code)
	}
	got, msg := errOf(body)
	if got != code {
		r.t.Fatalf("%s: error %d (%s), want %d", what, got, msg, code)
	}
	if msg == "" {
		r.t.Fatalf("%s: error %d without a message", what, got)
	}
	if body[len(body)-1] != 0 {
		r.t.Fatalf("%s: error text %q not NUL-terminated as XRootD sends it", what, msg)
	}
}

// open opens path with options and returns the handle.
func (r *rawConn) open(path string, opts uint16) [4]byte {
	r.t.Helper()
	var b [16]byte
	binary.BigEndian.PutUint16(b[0:], 0o644)
	binary.BigEndian.PutUint16(b[2:], opts)
	st, body := r.call(proto.ReqOpen, b, []byte(path))
	if st != proto.StatusOK || len(body) < 4 {
		c, m := errOf(body)
		r.t.Fatalf("open %s: status %d %d %s", path, st, c, m)
	}
	var h [4]byte
	copy(h[:], body)
	return h
}

// readBody builds the body of a read or pgread request.
func readBody(h [4]byte, off int64, n int32) [16]byte {
	var b [16]byte
	copy(b[:4], h[:])
	binary.BigEndian.PutUint64(b[4:], uint64(off))
	binary.BigEndian.PutUint32(b[12:], uint32(n))
	return b
}

func handleBody(h [4]byte) [16]byte {
	var b [16]byte
	copy(b[:4], h[:])
	return b
}
