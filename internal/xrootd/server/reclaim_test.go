package server

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/units"
	"sitebox/internal/xrootd/proto"
)

// loginAt is loginFrom, then a pause: sessions logged in one after the
// other differ in when they were last heard from.
func loginAt(t *testing.T, addr, ip string) *rawConn {
	t.Helper()
	r := loginFrom(t, addr, ip)
	time.Sleep(5 * time.Millisecond)
	return r
}

// served reports whether r's session still answers a ping; one refused
// or closed does not.
func served(r *rawConn) bool {
	r.c.SetDeadline(time.Now().Add(5 * time.Second))
	defer r.c.SetDeadline(time.Time{})
	var sid proto.StreamID
	sid[1] = byte(r.next)
	r.next++
	if _, err := r.c.Write(proto.EncodeRequest(sid, proto.ReqPing, [16]byte{}, nil)); err != nil {
		return false
	}
	h, _, err := proto.ReadResponse(r.c, 1<<20)
	return err == nil && h.Status == proto.StatusOK
}

// wantRefused checks that r's first request is refused naming want.
func wantRefused(t *testing.T, r *rawConn, want string) {
	t.Helper()
	st, body := r.call(proto.ReqPing, [16]byte{}, nil)
	if _, msg := errOf(body); st != proto.StatusError || !strings.Contains(msg, want) {
		t.Fatalf("newcomer: status %d %q, want refused with %q", st, msg, want)
	}
}

// A limit on sessions reached by sessions that hold nothing admits a new
// client: the idle session counted under that limit and silent longest
// is closed. Sessions with a file open or a request in flight are not,
// and once only they are left the newcomer is refused naming the limit.
func TestReclaimIdleSessions(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		addr, dir := testEnv(t, Config{Settings: Settings{Limits: Limits{Sessions: 4, SessionsPerClient: 4, SessionsPerNetwork: 4}}})
		writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
		busy := loginAt(t, addr, "127.0.0.1")
		h := busy.open("/f", proto.OpenRead)
		waiting := loginAt(t, addr, "127.0.0.2")
		// An open waiting for a third-party copy grant that never comes
		// is a request in flight for 5 s.
		waiting.send(proto.ReqOpen, [16]byte{}, []byte("/f?tpc.key=none&tpc.org=x.1@127.0.0.2"))
		idle1 := loginAt(t, addr, "127.0.1.1")
		idle2 := loginAt(t, addr, "127.0.2.1")

		// Each ping below makes its session the one heard from last.
		newcomer := loginAt(t, addr, "127.0.3.1")
		if !served(newcomer) || served(idle1) {
			t.Fatal("the newcomer did not take the place of the session idle longest")
		}
		second := loginAt(t, addr, "127.0.4.1") // idle2 is the one idle longest now
		if !served(second) || served(idle2) {
			t.Fatal("the second newcomer did not take the place of the session idle longest")
		}
		third := loginAt(t, addr, "127.0.5.1") // then the first newcomer
		if !served(third) || served(newcomer) || !served(second) {
			t.Fatal("the third newcomer did not take the place of the first")
		}
		if st, body := busy.call(proto.ReqRead, readBody(h, 0, 4), nil); st != proto.StatusOK || string(body) != "data" {
			t.Fatalf("the session with a file open: read %d %q", st, body)
		}
		second.open("/f", proto.OpenRead)
		third.open("/f", proto.OpenRead)
		wantRefused(t, loginAt(t, addr, "127.0.6.1"), "too many sessions on this server (limit 4)")
	})
	t.Run("address and network", func(t *testing.T) {
		addr, dir := testEnv(t, Config{setupGrace: time.Nanosecond, Settings: Settings{Limits: Limits{SessionsPerClient: 2, SessionsPerNetwork: 3}}})
		writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
		other := loginAt(t, addr, "127.0.9.1") // idle longest, but in no limit reached
		mine := loginAt(t, addr, "127.0.0.2")
		busy := loginAt(t, addr, "127.0.0.2")
		busy.open("/f", proto.OpenRead)
		// The address's limit: its own idle session makes room.
		again := loginAt(t, addr, "127.0.0.2")
		if !served(again) || served(mine) || !served(other) {
			t.Fatal("a session past the address's limit did not take the place of its idle one")
		}
		again.open("/f", proto.OpenRead)
		wantRefused(t, loginAt(t, addr, "127.0.0.2"), "too many sessions from 127.0.0.2 (limit 2)")
		// The network's limit: an idle session of the network makes room.
		neighbour := loginAt(t, addr, "127.0.0.3")
		if !served(neighbour) || !served(other) {
			t.Fatal("the network had room")
		}
		next := loginAt(t, addr, "127.0.0.4")
		if !served(next) || served(neighbour) || !served(other) {
			t.Fatal("a session past the network's limit did not take the place of the network's idle one")
		}
	})
}

// A session just set up is not closed for a newcomer from its own
// address, which may be a substream binding to it.
func TestReclaimSparesNewSessions(t *testing.T) {
	addr, _ := testEnv(t, Config{Settings: Settings{Limits: Limits{SessionsPerClient: 1}}})
	first := loginAt(t, addr, "127.0.0.2")
	wantRefused(t, loginAt(t, addr, "127.0.0.2"), "too many sessions from 127.0.0.2 (limit 1)")
	if !served(first) {
		t.Fatal("a session just set up was closed for another from its address")
	}
}

// A limit on open files reached by sessions whose files, all open for
// reading, have been untouched for the idle timeout lets a new client
// open: the session silent longest is closed. A session with a file open
// for writing is never closed so, nor one silent for less.
func TestReclaimSilentFileHolders(t *testing.T) {
	idle := 300 * time.Millisecond
	addr, dir := testEnv(t, Config{Settings: Settings{IdleTimeout: units.Duration(idle), Limits: Limits{OpenFiles: 3, OpenFilesPerClient: 3, OpenFilesPerNetwork: 3}}})
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	writer := loginAt(t, addr, "127.0.1.1")
	wh := writer.open("/w", proto.OpenNew)
	a := loginAt(t, addr, "127.0.2.1")
	a.open("/f", proto.OpenRead)
	b := loginAt(t, addr, "127.0.3.1")
	bh := b.open("/f", proto.OpenRead)

	early := loginAt(t, addr, "127.0.4.1")
	st, body := early.call(proto.ReqOpen, [16]byte{}, []byte("/f"))
	if _, msg := errOf(body); st != proto.StatusError || !strings.Contains(msg, "too many open files on this server (limit 3)") {
		t.Fatalf("open before anyone was silent for long: status %d %q, want refused naming the limit", st, msg)
	}
	time.Sleep(2 * idle)
	newcomer := loginAt(t, addr, "127.0.5.1")
	newcomer.open("/f", proto.OpenRead)
	if served(a) || !served(writer) {
		t.Fatal("the reader silent longest was not closed, or the writer was")
	}
	if st, body := b.call(proto.ReqRead, readBody(bh, 0, 4), nil); st != proto.StatusOK || string(body) != "data" {
		t.Fatalf("the other reader: %d %q", st, body)
	}
	var wb [16]byte
	copy(wb[:4], wh[:])
	if st, _ := writer.call(proto.ReqWrite, wb, []byte("kept")); st != proto.StatusOK {
		t.Fatal("the silent writer cannot write")
	}
}
