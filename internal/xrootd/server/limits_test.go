package server

import (
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/units"
	"sitebox/internal/xrootd/proto"
)

// step is one limiter call: "+s"/"-s" add/drop a session, "+f"/"-f" a
// file, for addr; want is "" for success or the refusal's text.
type step struct{ op, addr, want string }

func TestLimiterBookkeeping(t *testing.T) {
	tests := []struct {
		name  string
		lim   Limits
		steps []step
	}{
		{"sessions per client", Limits{SessionsPerClient: 2}, []step{
			{"+s", "a", ""}, {"+s", "a", ""}, {"+s", "a", "too many sessions from a (limit 2)"}, {"+s", "b", ""}}},
		{"sessions in total", Limits{Sessions: 2}, []step{
			{"+s", "a", ""}, {"+s", "b", ""}, {"+s", "c", "too many sessions on this server (limit 2)"}}},
		{"a dropped session frees its place", Limits{SessionsPerClient: 1}, []step{
			{"+s", "a", ""}, {"-s", "a", ""}, {"+s", "a", ""}, {"+s", "a", "too many sessions from a (limit 1)"}}},
		{"files per client", Limits{OpenFilesPerClient: 2}, []step{
			{"+f", "a", ""}, {"+f", "a", ""}, {"+f", "a", "too many open files from a (limit 2)"}, {"+f", "b", ""}}},
		{"files in total", Limits{OpenFiles: 1}, []step{
			{"+f", "a", ""}, {"+f", "b", "too many open files on this server (limit 1)"}}},
		{"a closed file frees its place", Limits{OpenFilesPerClient: 1}, []step{
			{"+f", "a", ""}, {"-f", "a", ""}, {"+f", "a", ""}}},
		{"a refusal counts nothing", Limits{SessionsPerClient: 1, Sessions: 2}, []step{
			{"+s", "a", ""}, {"+s", "a", "too many sessions from a (limit 1)"}, {"+s", "b", ""}, {"+s", "c", "too many sessions on this server (limit 2)"}}},
		{"sessions per network", Limits{SessionsPerClient: 2, SessionsPerNetwork: 3}, []step{
			{"+s", "192.0.2.1", ""}, {"+s", "192.0.2.1", ""}, {"+s", "192.0.2.2", ""},
			{"+s", "192.0.2.3", "too many sessions from network 192.0.2.0/24 (limit 3)"},
			{"+s", "::ffff:192.0.2.4", "too many sessions from network 192.0.2.0/24 (limit 3)"},
			{"+s", "192.0.3.1", ""},
			{"-s", "192.0.2.1", ""}, {"+s", "192.0.2.3", ""}}},
		{"IPv6 sessions per network", Limits{SessionsPerClient: 1, SessionsPerNetwork: 2}, []step{
			{"+s", "2001:db8:0:1::1", ""}, {"+s", "2001:db8:0:1::2", ""},
			{"+s", "2001:db8:0:1:ffff::3", "too many sessions from network 2001:db8:0:1::/64 (limit 2)"},
			{"+s", "2001:db8:0:2::1", ""}}},
		{"files per network", Limits{OpenFilesPerClient: 2, OpenFilesPerNetwork: 3}, []step{
			{"+f", "192.0.2.1", ""}, {"+f", "192.0.2.1", ""}, {"+f", "192.0.2.1", "too many open files from 192.0.2.1 (limit 2)"},
			{"+f", "192.0.2.2", ""}, {"+f", "192.0.2.2", "too many open files from network 192.0.2.0/24 (limit 3)"},
			{"+f", "198.51.100.1", ""}, {"-f", "192.0.2.1", ""}, {"+f", "192.0.2.2", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimiter(tc.lim, slog.New(slog.DiscardHandler))
			for i, st := range tc.steps {
				var err *limitError
				switch st.op {
				case "+s":
					err = l.addSession(st.addr)
				case "-s":
					l.dropSession(st.addr)
				case "+f":
					err = l.addFile(st.addr)
				case "-f":
					l.dropFile(st.addr)
				}
				got := ""
				if err != nil {
					got = strings.TrimSuffix(err.Error(), "; close some and retry later")
				}
				if got != st.want {
					t.Fatalf("step %d (%s %s): got %q, want %q", i, st.op, st.addr, got, st.want)
				}
			}
		})
	}
	t.Run("negative is unlimited", func(t *testing.T) {
		l := newLimiter(Limits{SessionsPerClient: -1, Sessions: -1}, slog.New(slog.DiscardHandler))
		for range 10000 {
			if err := l.addSession("a"); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("defaults fit the descriptors", func(t *testing.T) {
		for _, tc := range []struct {
			fds  int
			want Limits
		}{
			{0, Limits{Sessions: 4096, SessionsPerClient: 512, SessionsPerNetwork: 1024,
				OpenFiles: 32768, OpenFilesPerClient: 4096, OpenFilesPerNetwork: 8192, OpenFilesPerSession: 1024, SubstreamsPerSession: 15}},
			{1 << 20, Limits{Sessions: 4096, SessionsPerClient: 512, SessionsPerNetwork: 1024,
				OpenFiles: 32768, OpenFilesPerClient: 4096, OpenFilesPerNetwork: 8192, OpenFilesPerSession: 1024, SubstreamsPerSession: 15}},
			// This machine's 20,000 descriptors: an address an eighth, a
			// network a quarter of each total.
			{20000, Limits{Sessions: 2500, SessionsPerClient: 312, SessionsPerNetwork: 625,
				OpenFiles: 10000, OpenFilesPerClient: 1250, OpenFilesPerNetwork: 2500, OpenFilesPerSession: 1024, SubstreamsPerSession: 15}},
			{1024, Limits{Sessions: 128, SessionsPerClient: 16, SessionsPerNetwork: 32,
				OpenFiles: 512, OpenFilesPerClient: 64, OpenFilesPerNetwork: 128, OpenFilesPerSession: 512, SubstreamsPerSession: 15}},
		} {
			var l Limits
			l.defaultsFor(tc.fds)
			if l != tc.want {
				t.Errorf("%d descriptors: defaults %+v, want %+v", tc.fds, l, tc.want)
			}
		}
		l := Limits{Sessions: 7, OpenFilesPerSession: -1}
		l.defaultsFor(1024)
		if l.Sessions != 7 || l.OpenFilesPerSession != -1 {
			t.Errorf("set limits changed: %+v", l)
		}
		// A network's default never refuses what its address may hold,
		// and lifting an address's limit lifts its network's.
		l = Limits{SessionsPerClient: 2000, OpenFilesPerClient: -1}
		l.defaultsFor(0)
		if l.SessionsPerNetwork != 2000 || l.OpenFilesPerNetwork != -1 {
			t.Errorf("network defaults %d and %d, want 2000 and -1", l.SessionsPerNetwork, l.OpenFilesPerNetwork)
		}
	})
	t.Run("nothing held leaves no entry", func(t *testing.T) {
		l := newLimiter(Limits{}, slog.New(slog.DiscardHandler))
		l.addSession("a")
		l.addFile("a")
		l.dropFile("a")
		l.dropSession("a")
		l.addSession("b")
		if len(l.clients) != 1 || len(l.networks) != 1 || l.sessions != 1 || l.files != 0 {
			t.Fatalf("clients %v networks %v sessions %d files %d, want only b with one session", l.clients, l.networks, l.sessions, l.files)
		}
	})
}

func TestRefusalLoggedOncePerBurst(t *testing.T) {
	var rn refusalNotes
	t0 := time.Unix(1000, 0)
	if _, ok := rn.note("a", t0); !ok {
		t.Fatal("first refusal not logged")
	}
	for i := range 5 {
		if _, ok := rn.note("a", t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatal("repeated refusal within the burst logged")
		}
	}
	if _, ok := rn.note("b", t0); !ok {
		t.Fatal("another client's refusal not logged")
	}
	n, ok := rn.note("a", t0.Add(refusalBurst))
	if !ok || n != 5 {
		t.Fatalf("after the burst: logged %v with %d suppressed, want true with 5", ok, n)
	}
	for i := range maxRefusalNotes + 10 {
		rn.note(strings.Repeat("x", i%50)+string(rune(i)), t0)
	}
	if len(rn.m) > maxRefusalNotes {
		t.Fatalf("%d notes kept, limit %d", len(rn.m), maxRefusalNotes)
	}
}

// loginErr does hello, protocol, login and a ping and returns the error
// of the ping (a session over a limit is refused at its first request
// after login).
func loginErr(t *testing.T, addr string) (int32, string) {
	t.Helper()
	r := dialRaw(t, addr)
	r.hello()
	r.protocol()
	var lb [16]byte
	copy(lb[4:], "tester")
	if st, _ := r.call(proto.ReqLogin, lb, nil); st != proto.StatusOK {
		t.Fatalf("login: status %d", st)
	}
	st, body := r.call(proto.ReqPing, [16]byte{}, nil)
	if st != proto.StatusError {
		return 0, ""
	}
	return errOf(body)
}

// A session past a limit whose places are held by busy sessions (here:
// with a file open) is refused naming the limit (idle ones would be
// closed to make room: reclaim_test.go).
func TestSessionLimit(t *testing.T) {
	addr, dir := testEnv(t, Config{Settings: Settings{Limits: Limits{SessionsPerClient: 2}}})
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	login(t, addr).open("/f", proto.OpenRead)
	second := login(t, addr)
	second.open("/f", proto.OpenRead)
	code, msg := loginErr(t, addr)
	if code != proto.ErrOverloaded || !strings.Contains(msg, "too many sessions from 127.0.0.1 (limit 2)") {
		t.Fatalf("third session: error %d %q, want kXR_Overloaded naming the limit", code, msg)
	}
	second.c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := loginErr(t, addr); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed session did not free its place")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpenFileLimits(t *testing.T) {
	addr, dir := testEnv(t, Config{Settings: Settings{Limits: Limits{OpenFilesPerSession: 3, OpenFilesPerClient: 5}}})
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	a, b := login(t, addr), login(t, addr)
	var ha [][4]byte
	for range 3 {
		ha = append(ha, a.open("/f", proto.OpenRead))
	}
	openReq := func(r *rawConn) (uint16, []byte) {
		return r.call(proto.ReqOpen, [16]byte{}, []byte("/f"))
	}
	st, body := openReq(a)
	a.wantErr("4th open in a session", st, body, proto.ErrNoMemory)
	if _, msg := errOf(body); !strings.Contains(msg, "too many open files in this session (limit 3)") {
		t.Fatalf("session limit message %q", msg)
	}
	b.open("/f", proto.OpenRead)
	b.open("/f", proto.OpenRead)
	st, body = openReq(b)
	b.wantErr("6th open from the address", st, body, proto.ErrOverloaded)
	if _, msg := errOf(body); !strings.Contains(msg, "too many open files from 127.0.0.1 (limit 5)") {
		t.Fatalf("client limit message %q", msg)
	}
	if st, _ := a.call(proto.ReqClose, handleBody(ha[0]), nil); st != proto.StatusOK {
		t.Fatal("close failed")
	}
	b.open("/f", proto.OpenRead) // the close gave the place back
	a.c.Close()                  // and so does a session's end
	c := login(t, addr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, _ := openReq(c); st == proto.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed session's files still count")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantClosed waits for the server to close c's connection.
func wantClosed(t *testing.T, r *rawConn, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	r.c.SetReadDeadline(start.Add(within))
	_, err := io.Copy(io.Discard, r.c)
	if ne := (interface{ Timeout() bool })(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", within)
	}
	return time.Since(start)
}

func TestPartialRequestTimeout(t *testing.T) {
	addr, dir := testEnv(t, Config{Settings: Settings{RequestTimeout: units.Duration(300 * time.Millisecond)}})
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))

	t.Run("half a header", func(t *testing.T) {
		r := login(t, addr)
		r.raw(make([]byte, 10))
		wantClosed(t, r, 5*time.Second)
	})
	t.Run("write without its payload", func(t *testing.T) {
		r := login(t, addr)
		h := r.open("/w", proto.OpenNew)
		var wb [16]byte
		copy(wb[:4], h[:])
		var sid proto.StreamID
		hdr := proto.EncodeRequest(sid, proto.ReqWrite, wb, nil)
		binary.BigEndian.PutUint32(hdr[20:], 1<<20)
		r.raw(hdr)
		r.raw(make([]byte, 1000)) // a little, then nothing
		wantClosed(t, r, 5*time.Second)
	})
	t.Run("slow but steady payload is taken", func(t *testing.T) {
		r := login(t, addr)
		h := r.open("/s", proto.OpenNew)
		var wb [16]byte
		copy(wb[:4], h[:])
		sid := proto.StreamID{0, 9}
		hdr := proto.EncodeRequest(sid, proto.ReqWrite, wb, nil)
		binary.BigEndian.PutUint32(hdr[20:], 10)
		r.raw(hdr)
		for range 10 {
			time.Sleep(100 * time.Millisecond) // 1 s in all, each gap within the timeout
			r.raw([]byte{'x'})
		}
		if st, _ := r.answer(sid); st != proto.StatusOK {
			t.Fatalf("slow write: status %d", st)
		}
	})
	stillServes(t, addr)
}
