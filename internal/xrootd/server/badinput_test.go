package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// stillServes checks that a fresh client is served normally.
func stillServes(t *testing.T, addr string) {
	t.Helper()
	r := login(t, addr)
	if st, _ := r.call(proto.ReqStat, [16]byte{}, []byte("/")); st != proto.StatusOK {
		t.Fatalf("server no longer serves: stat status %d", st)
	}
}

// waitGoroutines waits for the goroutine count to fall to at most n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMalformedFrames(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	header := func(id uint16, dlen uint32) []byte {
		var b [24]byte
		binary.BigEndian.PutUint16(b[2:], id)
		binary.BigEndian.PutUint32(b[20:], dlen)
		return b[:]
	}
	tests := []struct {
		name  string
		bytes []byte
		// wantErr is the kXR error expected before the server closes; 0
		// when the server just closes.
		wantErr int32
	}{
		{"huge dlen", header(proto.ReqStat, 0x7fffffff), proto.ErrArgTooLong},
		{"negative dlen", header(proto.ReqOpen, 0xffffffff), proto.ErrArgTooLong},
		{"huge write", header(proto.ReqWrite, 1<<30), proto.ErrArgTooLong},
		{"truncated header", header(proto.ReqStat, 0)[:10], 0},
		{"truncated payload", append(header(proto.ReqStat, 100), "/abc"...), 0},
		{"truncated write payload", append(header(proto.ReqWrite, 1<<20), make([]byte, 1000)...), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := login(t, addr)
			r.raw(tt.bytes)
			if tt.wantErr != 0 {
				h, body := r.recv()
				if c, msg := errOf(body); h.Status != proto.StatusError || c != tt.wantErr || msg == "" {
					t.Fatalf("answer %d %d %q", h.Status, c, msg)
				}
				if _, _, err := r.tryRecv(); err == nil {
					t.Fatal("connection still open after an unrecoverable frame")
				}
			} else {
				r.c.(*net.TCPConn).CloseWrite()
				if _, _, err := r.tryRecv(); !errors.Is(err, io.EOF) {
					t.Fatalf("want the server to close, got %v", err)
				}
			}
			stillServes(t, addr)
		})
	}
	t.Run("not a hello", func(t *testing.T) {
		r := dialRaw(t, addr)
		r.raw([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if _, _, err := r.tryRecv(); err == nil {
			t.Fatal("answered a non-XRootD client")
		}
		stillServes(t, addr)
	})
}

func TestClientLeavesMidRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   uint16
		cfg  Config
		st   func(store.Store) store.Store
	}{
		{"read sendfile", proto.ReqRead, Config{}, nil},
		{"read buffered", proto.ReqRead, Config{}, func(s store.Store) store.Store { return noSendfile{s} }},
		{"pgread", proto.ReqPgread, Config{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, dir := newOriginStore(t, false)
			if tc.st != nil {
				st = tc.st(st)
			}
			writeTestFile(t, filepath.Join(dir, "big"), patterned(64<<20))
			addr := startServer(t, tc.cfg, st)
			stillServes(t, addr)
			other := login(t, addr)
			time.Sleep(50 * time.Millisecond)
			base := runtime.NumGoroutine()
			for range 3 {
				r := login(t, addr)
				h := r.open("/big", proto.OpenRead)
				for i := range 4 {
					r.send(tc.id, readBody(h, int64(i)<<24, 16<<20), nil)
				}
				io.ReadFull(r.c, make([]byte, 100000)) // part of the answers
				r.c.Close()
			}
			waitGoroutines(t, base)
			if st, _ := other.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
				t.Fatal("other client not served")
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	roStore, roDir := newOriginStore(t, true)
	rwStore, rwDir := newOriginStore(t, false)
	for _, tc := range []struct {
		name string
		cfg  Config
		st   store.Store
		dir  string
	}{
		{"read-only export", Config{}, roStore, roDir},
		{"read-only server", Config{ReadOnly: true}, rwStore, rwDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeTestFile(t, filepath.Join(tc.dir, "f"), []byte("data"))
			r := login(t, startServer(t, tc.cfg, tc.st))
			for _, opts := range []uint16{proto.OpenNew, proto.OpenDelete, proto.OpenUpdate} {
				var b [16]byte
				binary.BigEndian.PutUint16(b[2:], opts)
				st, body := r.call(proto.ReqOpen, b, []byte("/f"))
				r.wantErr(fmt.Sprintf("open %x", opts), st, body, proto.ErrFSReadOnly)
			}
			var mv [16]byte
			for _, req := range []struct {
				id   uint16
				arg  string
				body [16]byte
			}{
				{proto.ReqMkdir, "/d", [16]byte{}},
				{proto.ReqRm, "/f", [16]byte{}},
				{proto.ReqRmdir, "/", [16]byte{}},
				{proto.ReqMv, "/f /g", mv},
				{proto.ReqChmod, "/f", [16]byte{}},
				{proto.ReqTruncate, "/f", [16]byte{}},
			} {
				st, body := r.call(req.id, req.body, []byte(req.arg))
				r.wantErr(proto.RequestName(req.id), st, body, proto.ErrFSReadOnly)
			}
			r.open("/f", proto.OpenRead)
		})
	}
}

// fullStore fails every write with ErrNoSpace, like a full disk.
type fullStore struct{ store.Store }

type fullFile struct{ store.WritableFile }

func (f fullStore) Create(ctx context.Context, name string, o store.CreateOptions) (store.WritableFile, error) {
	w, err := store.Create(ctx, f.Store, name, o)
	if err != nil {
		return nil, err
	}
	return fullFile{w}, nil
}

func (fullFile) WriteAt([]byte, int64) (int, error) {
	return 0, &store.PathError{Op: "write", Path: "/f", Err: store.ErrNoSpace}
}

func TestNoSpace(t *testing.T) {
	st, _ := newOriginStore(t, false)
	addr := startServer(t, Config{}, fullStore{st})
	r := login(t, addr)
	h := r.open("/f", proto.OpenNew)
	var wb [16]byte
	copy(wb[:4], h[:])
	st2, body := r.call(proto.ReqWrite, wb, make([]byte, 3<<20))
	r.wantErr("write", st2, body, proto.ErrNoSpace)
	st2, body = r.call(proto.ReqPgwrite, pgwriteReq(h, 0, 0), pgwriteBody(0, make([]byte, 10000), nil))
	r.wantErr("pgwrite", st2, body, proto.ErrNoSpace)
	if st, _ := r.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
		t.Fatal("connection out of step after failed writes")
	}
}

func TestManyInFlight(t *testing.T) {
	data := patterned(6 << 20)
	addr, dir := testEnv(t, Config{MaxInFlight: 4, MaxReadChunk: 256 << 10})
	writeTestFile(t, filepath.Join(dir, "f"), data)
	r := login(t, addr)
	h := r.open("/f", proto.OpenRead)
	want := map[proto.StreamID][]byte{}
	for i := range 40 {
		off := int64(i) * 150000
		var sid proto.StreamID
		if i%2 == 0 {
			sid = r.send(proto.ReqRead, readBody(h, off, 600000), nil)
		} else {
			sid = r.send(proto.ReqStat, [16]byte{}, []byte("/f"))
		}
		want[sid] = data[off:min(off+600000, int64(len(data)))]
		if i%2 == 1 {
			want[sid] = nil
		}
	}
	got := map[proto.StreamID][]byte{}
	for done := 0; done < len(want); {
		hd, b := r.recv()
		if hd.Status == proto.StatusError {
			c, m := errOf(b)
			t.Fatalf("error %d %s", c, m)
		}
		if want[hd.Stream] != nil {
			got[hd.Stream] = append(got[hd.Stream], b...)
		}
		if hd.Status == proto.StatusOK {
			done++
		}
	}
	for sid, w := range want {
		if w != nil && string(got[sid]) != string(w) {
			t.Fatalf("stream %x: %d bytes, want %d", sid, len(got[sid]), len(w))
		}
	}
}
