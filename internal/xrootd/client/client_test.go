package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		size    int64
		dir, ok bool
	}{
		{"123 4096 48 1700000000 1700000000 1700000000 0644 u g\x00", 4096, false, true},
		{"1 0 19 1700000000", 0, true, true}, // readable|isDir|xset
		{"garbage", 0, false, false},
	} {
		fi, err := parseStat("x", tc.in)
		if (err == nil) != tc.ok || fi.Size != tc.size || fi.IsDir() != tc.dir {
			t.Errorf("parseStat(%q) = %+v, %v", tc.in, fi, err)
		}
	}
	l, err := parseDirlist(".\n0 0 0 0\na\n1 10 16 5\nb\n2 0 18 5\x00")
	if err != nil || len(l) != 2 || l[0].Name != "a" || l[0].Size != 10 || !l[1].IsDir() {
		t.Fatalf("parseDirlist = %+v, %v", l, err)
	}
}

// fakeServer answers the handshake, protocol and login, then passes every
// other request to answer.
func fakeServer(t *testing.T, answer func(net.Conn, *proto.Request)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFake(t, ln, answer)
	return ln.Addr().String()
}

// serveFake is fakeServer on a listener of the caller's.
func serveFake(t *testing.T, ln net.Listener, answer func(net.Conn, *proto.Request)) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				hs := make([]byte, 20)
				if _, err := io.ReadFull(c, hs); err != nil {
					return
				}
				resp := make([]byte, 16)
				proto.PutResponseHeader(resp, proto.ResponseHeader{Dlen: 8})
				c.Write(resp)
				for {
					req, err := proto.ReadRequest(c, 1<<20)
					if err != nil {
						return
					}
					switch req.ID {
					case proto.ReqProtocol:
						send(c, req.Stream, proto.StatusOK, make([]byte, 8))
					case proto.ReqLogin:
						send(c, req.Stream, proto.StatusOK, make([]byte, 16))
					default:
						answer(c, req)
					}
				}
			}()
		}
	}()
}

func send(c net.Conn, s proto.StreamID, status uint16, body []byte) {
	b := make([]byte, 8+len(body))
	proto.PutResponseHeader(b, proto.ResponseHeader{Stream: s, Status: status, Dlen: int32(len(body))})
	copy(b[8:], body)
	c.Write(b)
}

func TestRedirectLoopStops(t *testing.T) {
	var addr string
	addr = fakeServer(t, func(c net.Conn, req *proto.Request) {
		host, port, _ := net.SplitHostPort(addr)
		b := make([]byte, 4)
		p := 0
		for _, ch := range port {
			p = p*10 + int(ch-'0')
		}
		binary.BigEndian.PutUint32(b, uint32(p))
		send(c, req.Stream, proto.StatusRedirect, append(b, host...))
	})
	fs := NewFS(addr)
	defer fs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := fs.Stat(ctx, "/x")
	if err == nil || !strings.Contains(err.Error(), "redirect limit of 16 reached: loop between directors?") || !errors.Is(err, ErrRedirectLimit) {
		t.Fatalf("Stat through a redirect loop: %v", err)
	}
}

func TestErrorsMapToStoreSentinels(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		b := make([]byte, 4)
		binary.BigEndian.PutUint32(b, uint32(proto.ErrNotFound))
		send(c, req.Stream, proto.StatusError, append(b, "no such file"...))
	})
	fs := NewFS(addr)
	defer fs.Close()
	_, err := fs.Stat(context.Background(), "/x")
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("err = %v", err)
	}
}

// A server that drops the connection mid-request fails the call with an
// error (without Options.Reconnect); the next call re-dials.
func TestDroppedConnection(t *testing.T) {
	var calls atomic.Int32
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		if calls.Add(1) == 1 {
			c.Close()
			return
		}
		send(c, req.Stream, proto.StatusOK, []byte("1 5 16 0\x00"))
	})
	fs := NewFS(addr)
	defer fs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := fs.Stat(ctx, "/x"); err == nil {
		t.Fatal("stat on a dropped connection succeeded")
	}
	fi, err := fs.Stat(ctx, "/x")
	if err != nil || fi.Size != 5 {
		t.Fatalf("stat after re-dial: %+v, %v", fi, err)
	}
}

// A read abandoned while its answer is arriving (the server stalls
// mid-frame) returns when its context ends, and the connection is
// dropped: the frame's rest must never land in a buffer the caller has
// taken back. The next read re-dials and lands its data in place.
func TestReadAbandonedMidFrame(t *testing.T) {
	var reads atomic.Int32
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		switch req.ID {
		case proto.ReqOpen:
			send(c, req.Stream, proto.StatusOK, []byte{1, 2, 3, 4})
		case proto.ReqRead:
			if reads.Add(1) == 1 {
				send(c, req.Stream, proto.StatusOKSoFar, bytes.Repeat([]byte{'a'}, 100))
				h := make([]byte, 8)
				proto.PutResponseHeader(h, proto.ResponseHeader{Stream: req.Stream, Status: proto.StatusOK, Dlen: 1000})
				c.Write(append(h, "0123456789"...))
				<-stall
				return
			}
			send(c, req.Stream, proto.StatusOK, bytes.Repeat([]byte{'b'}, 50))
		default:
			send(c, req.Stream, proto.StatusOK, nil)
		}
	})
	fs := NewFS(addr)
	defer fs.Close()
	f, err := fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1100)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.(*File).ReadAtContext(ctx, buf, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read of a stalled frame: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("abandoned read returned after %v", el)
	}
	if !bytes.Equal(buf[:100], bytes.Repeat([]byte{'a'}, 100)) {
		t.Fatalf("the first frame did not land in place: %q", buf[:100])
	}
	f, err = fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	buf = make([]byte, 50)
	if n, err := f.ReadAt(buf, 0); n != 50 || err != nil || !bytes.Equal(buf, bytes.Repeat([]byte{'b'}, 50)) {
		t.Fatalf("read after re-dial: %d %v %q", n, err, buf)
	}
}

// An open keeps what the server's kXR_retstat said (size, mtime), and
// Connect dials ahead of the first request.
func TestOpenStatAndConnect(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		if req.ID != proto.ReqOpen {
			send(c, req.Stream, proto.StatusError, make([]byte, 4))
			return
		}
		body := append(make([]byte, 12), "42 5000 16 1700000000\x00"...)
		send(c, req.Stream, proto.StatusOK, body)
	})
	fs := NewFS(addr)
	defer fs.Close()
	if fs.Connected() {
		t.Fatal("connected before any request")
	}
	if err := fs.Connect(context.Background()); err != nil || !fs.Connected() {
		t.Fatalf("Connect: %v, connected %v", err, fs.Connected())
	}
	f, err := fs.Open(context.Background(), "/f")
	if err != nil {
		t.Fatal(err)
	}
	fi, ok := f.(*File).OpenStat()
	if !ok || fi.Size != 5000 || !fi.ModTime.Equal(time.Unix(1700000000, 0)) || fi.IsDir() {
		t.Fatalf("OpenStat = %+v, %v", fi, ok)
	}
}
