package server

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// panicCatcher records requests that panicked (the session recovers them,
// which would hide them from the fuzzer).
type panicCatcher struct {
	mu     sync.Mutex
	panics []string
}

func (h *panicCatcher) Enabled(context.Context, slog.Level) bool { return true }
func (h *panicCatcher) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *panicCatcher) WithGroup(string) slog.Handler            { return h }
func (h *panicCatcher) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "request panicked" {
		h.mu.Lock()
		defer h.mu.Unlock()
		r.Attrs(func(a slog.Attr) bool { h.panics = append(h.panics, a.String()); return true })
	}
	return nil
}

// smallStore keeps fuzzed writes from growing sparse files of terabytes,
// whose checksums and reads would take hours: a limit of the fuzz setup,
// not of the server.
type smallStore struct{ store.Store }

type smallFile struct{ store.WritableFile }

const smallLimit = 64 << 20

func (s smallStore) Create(ctx context.Context, name string, o store.CreateOptions) (store.WritableFile, error) {
	w, err := store.Create(ctx, s.Store, name, o)
	if err != nil {
		return nil, err
	}
	return smallFile{w}, nil
}

func (f smallFile) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > smallLimit {
		return 0, &store.PathError{Op: "write", Path: "/fuzz", Err: store.ErrNoSpace}
	}
	return f.WritableFile.WriteAt(p, off)
}

func (f smallFile) Truncate(size int64) error {
	if size > smallLimit {
		return &store.PathError{Op: "truncate", Path: "/fuzz", Err: store.ErrNoSpace}
	}
	return f.WritableFile.Truncate(size)
}

// sessionPrefix is a valid hello, protocol and login.
func sessionPrefix() []byte {
	var hs [20]byte
	binary.BigEndian.PutUint32(hs[12:], 4)
	binary.BigEndian.PutUint32(hs[16:], 2012)
	var pb, lb [16]byte
	binary.BigEndian.PutUint32(pb[0:], proto.ProtocolVersion)
	copy(lb[4:], "fuzz")
	b := append(hs[:], proto.EncodeRequest(proto.StreamID{0, 1}, proto.ReqProtocol, pb, nil)...)
	return append(b, proto.EncodeRequest(proto.StreamID{0, 2}, proto.ReqLogin, lb, nil)...)
}

var pingStream = proto.StreamID{0xff, 0xff}

// drainUntilPing reads responses, closing pinged when the final ping is
// answered or the connection ends.
func drainUntilPing(c net.Conn, pinged chan struct{}) {
	defer close(pinged)
	for {
		h, body, err := proto.ReadResponse(c, 64<<20)
		if err != nil {
			return
		}
		if h.Status == proto.StatusStatus {
			st, _, err := proto.ParseStatus(body)
			if err != nil || st.DataLen < 0 {
				return
			}
			if _, err := io.CopyN(io.Discard, c, int64(st.DataLen)); err != nil {
				return
			}
		}
		if h.Stream == pingStream {
			go io.Copy(io.Discard, c)
			return
		}
	}
}

// framePadding returns how many bytes complete the last request frame in
// b, as the session splits b into frames.
func framePadding(b []byte, maxData int) int {
	for len(b) > 0 {
		pad := 0
		if len(b) < proto.RequestHeaderLen { // the padding completes the header
			pad = proto.RequestHeaderLen - len(b)
			b = append(b[:len(b):len(b)], make([]byte, pad)...)
		}
		_, dlen := proto.DecodeRequestHeader(b)
		if dlen < 0 || int(dlen) > maxData {
			return 0 // the session hangs up here
		}
		need := proto.RequestHeaderLen + int(dlen)
		if len(b) < need || pad > 0 {
			return pad + max(need-len(b), 0)
		}
		b = b[need:]
	}
	return 0
}

// FuzzSession feeds arbitrary request bytes to a logged-in session over a
// pipe: the session must neither panic nor hang, whatever it is sent.
func FuzzSession(f *testing.F) {
	req := func(id uint16, body [16]byte, data string) []byte {
		return proto.EncodeRequest(proto.StreamID{0, 9}, id, body, []byte(data))
	}
	var open [16]byte
	binary.BigEndian.PutUint16(open[2:], proto.OpenRead)
	var create [16]byte
	binary.BigEndian.PutUint16(create[2:], proto.OpenDelete|proto.OpenMkpath)
	rd := readBody([4]byte{}, 0, 5000)
	f.Add(append(req(proto.ReqOpen, open, "/f"), req(proto.ReqRead, rd, "")...))
	f.Add(append(req(proto.ReqOpen, open, "/f"), req(proto.ReqPgread, readBody([4]byte{}, 4000, 9000), "")...))
	f.Add(append(req(proto.ReqOpen, open, "/f"), req(proto.ReqReadv, [16]byte{}, string(readList(proto.ReadListElem{Len: 10, Offset: 3})))...))
	f.Add(append(req(proto.ReqOpen, create, "/w"), req(proto.ReqPgwrite, pgwriteReq([4]byte{}, 10, 0), string(pgwriteBody(10, []byte("hello"), nil)))...))
	f.Add(append(req(proto.ReqOpen, create, "/w"), req(proto.ReqWrite, rd, "hello")...))
	f.Add(req(proto.ReqDirlist, [16]byte{15: proto.DirlistDstat}, "/"))
	f.Add(req(proto.ReqQuery, queryBody(proto.QueryCksum), "/f?cks.type=crc32c"))
	f.Add(req(proto.ReqMv, [16]byte{15: 2}, "/f /g"))
	f.Add(req(proto.ReqStat, [16]byte{}, "/../x"))
	dir := f.TempDir()
	writeTestFile(f, filepath.Join(dir, "f"), patterned(20000))
	st, _ := newOriginStoreAt(f, dir)
	st = smallStore{st}
	catcher := &panicCatcher{}
	srv := New(Config{MaxReadChunk: 64 << 10, MaxRequestData: 1 << 20}, st, slog.New(catcher))
	prefix := sessionPrefix()
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		sess := newSession(srv, server)
		done := make(chan struct{})
		go func() { sess.run(); close(done) }()
		pinged := make(chan struct{})
		go drainUntilPing(client, pinged)
		client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		client.Write(prefix)
		client.Write(data)
		// Complete the last frame and send a ping: its answer means the
		// session has worked through the input, unless the input made it
		// hang up, which ends the drain too.
		client.Write(make([]byte, framePadding(data, srv.cfg.MaxRequestData)))
		client.Write(proto.EncodeRequest(pingStream, proto.ReqPing, [16]byte{}, nil))
		select {
		case <-pinged:
		case <-time.After(5 * time.Second):
			t.Fatalf("session did not answer a ping after the input\n%s", stacks())
		}
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("session did not end after the client left\n%s", stacks())
		}
		catcher.mu.Lock()
		defer catcher.mu.Unlock()
		if len(catcher.panics) > 0 {
			t.Fatalf("request panicked: %v", catcher.panics)
		}
	})
}

// stacks returns every goroutine's stack, to show where a session hangs.
func stacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:runtime.Stack(buf, true)]
}
