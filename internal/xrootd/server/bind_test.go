package server

import (
	"bytes"
	"path/filepath"
	"testing"

	"sitebox/internal/xrootd/proto"
)

// loginSession logs in as login does and returns the session id too.
func loginSession(t *testing.T, addr string) (*rawConn, [16]byte) {
	t.Helper()
	r := dialRaw(t, addr)
	r.hello()
	r.protocol()
	var lb [16]byte
	copy(lb[4:], "tester")
	st, body := r.call(proto.ReqLogin, lb, nil)
	if st != proto.StatusOK || len(body) < 16 {
		t.Fatalf("login: status %d body %x", st, body)
	}
	var id [16]byte
	copy(id[:], body)
	return r, id
}

// bindTo opens a connection and binds it to session id, returning the
// connection and the status and body of the bind's answer.
func bindTo(t *testing.T, addr string, id [16]byte) (*rawConn, uint16, []byte) {
	t.Helper()
	r := dialRaw(t, addr)
	r.hello()
	r.protocol()
	st, body := r.call(proto.ReqBind, id, nil)
	return r, st, body
}

func TestBindSubstreams(t *testing.T) {
	cfg := Config{Settings: Settings{Limits: Limits{SubstreamsPerSession: 2}}}
	addr, dir := testEnv(t, cfg)
	data := patterned(3 << 20)
	writeTestFile(t, filepath.Join(dir, "f"), data)
	main, id := loginSession(t, addr)
	h := main.open("/f", proto.OpenRead)

	sub, st, body := bindTo(t, addr, id)
	if st != proto.StatusOK || len(body) != 1 || body[0] != 1 {
		t.Fatalf("bind: status %d body %x, want path id 1", st, body)
	}
	// A read naming path 1 is asked on the main connection and answered
	// on the substream, in frames, whole.
	sid := main.send(proto.ReqRead, readBody(h, 1000, 2<<20), append([]byte{1}, make([]byte, 7)...))
	var got []byte
	for {
		hd, b := sub.recv()
		if hd.Stream != sid {
			t.Fatalf("substream answer for stream %x, want %x", hd.Stream, sid)
		}
		got = append(got, b...)
		if hd.Status != proto.StatusOKSoFar {
			break
		}
	}
	if !bytes.Equal(got, data[1000:1000+2<<20]) {
		t.Fatalf("read over the substream: %d bytes, not the file's", len(got))
	}
	// The main connection still answers its own requests.
	if st, body := main.call(proto.ReqRead, readBody(h, 0, 10), nil); st != proto.StatusOK || !bytes.Equal(body, data[:10]) {
		t.Fatalf("read on the main connection: %d %x", st, body)
	}
	// pgread and readv name their path too.
	sid = main.send(proto.ReqPgread, readBody(h, 0, 4096), []byte{1})
	if hd, _ := sub.recv(); hd.Stream != sid || hd.Status != proto.StatusStatus {
		t.Fatalf("pgread over the substream: %+v", hd)
	}
	// An unknown path id is refused on the main connection.
	st, body = main.call(proto.ReqRead, readBody(h, 0, 10), append([]byte{7}, make([]byte, 7)...))
	main.wantErr("read on an unbound path", st, body, proto.ErrArgInvalid)

	// The per-session cap, then xrootd's answer past it.
	if _, st, body := bindTo(t, addr, id); st != proto.StatusOK || body[0] != 2 {
		t.Fatalf("second bind: %d %x", st, body)
	}
	r3, st, body := bindTo(t, addr, id)
	r3.wantErr("bind past the limit", st, body, proto.ErrNoMemory)

	// A request sent on a substream ends it.
	st, body = sub.call(proto.ReqStat, [16]byte{}, []byte("/f"))
	sub.wantErr("stat on a substream", st, body, proto.ErrInvalidRequest)
	if _, _, err := sub.tryRecv(); err == nil {
		t.Fatal("substream still open after a request on it")
	}
	// Its path id is free again.
	if _, st, body := bindTo(t, addr, id); st != proto.StatusOK || body[0] != 1 {
		t.Fatalf("bind after a substream ended: %d %x", st, body)
	}
}

func TestBindRefusals(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	// Not logged in: the session id of a connection that only said hello
	// is unknown to the client anyway; a random one is not found.
	r, st, body := bindTo(t, addr, [16]byte{1, 2, 3})
	r.wantErr("bind to an unknown session", st, body, proto.ErrNotFound)
	// A logged-in connection cannot bind.
	main, id := loginSession(t, addr)
	st, body = main.call(proto.ReqBind, id, nil)
	main.wantErr("bind on a logged-in connection", st, body, proto.ErrInvalidRequest)
	// Ending the main session ends its substreams.
	sub, st, _ := bindTo(t, addr, id)
	if st != proto.StatusOK {
		t.Fatal("bind failed")
	}
	main.c.Close()
	if _, _, err := sub.tryRecv(); err == nil {
		t.Fatal("substream outlived its session")
	}
}

// A substream is a session for the limits: past SessionsPerClient the
// bind is refused with the limit's error, as any connection would be.
func TestBindCountsAsSession(t *testing.T) {
	addr, _ := testEnv(t, Config{Settings: Settings{Limits: Limits{SessionsPerClient: 2}}})
	_, id := loginSession(t, addr)
	if _, st, _ := bindTo(t, addr, id); st != proto.StatusOK {
		t.Fatal("first substream refused")
	}
	r, st, body := bindTo(t, addr, id)
	r.wantErr("substream past the sessions per client", st, body, proto.ErrOverloaded)
}
