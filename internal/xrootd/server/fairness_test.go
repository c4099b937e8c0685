package server

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
)

// loginFrom is login from another local address: another client as far
// as the per-address accounting goes.
func loginFrom(t *testing.T, addr, ip string) *rawConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &rawConn{t: t, c: c, next: 1}
	r.hello()
	r.protocol()
	if st, _ := r.call(proto.ReqLogin, [16]byte{}, nil); st != proto.StatusOK {
		t.Fatalf("login: status %d", st)
	}
	return r
}

// Clients that start big pgreads and never read the answers hold at most
// their own share of the buffers, and one address at most half the pool:
// others are served promptly, with spare buffers or the other half (which
// a readv of large segments needs).
func TestStalledReadersDoNotStallOthers(t *testing.T) {
	st, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "big"), patterned(48<<20))
	srv := New(Config{MaxReadChunk: 1 << 20, MaxBufferMemory: 4 << 20}, st, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	addr := ln.Addr().String()
	for _, ip := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"} {
		r := loginFrom(t, addr, ip)
		h := r.open("/big", proto.OpenRead)
		r.send(proto.ReqPgread, readBody(h, 0, 48<<20), nil) // and never read
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.bufs.free) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("stalled readers from two addresses hold %d of 4 buffers, want all", 4-len(srv.bufs.free))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 4 { // and writers that send a header and go silent
		r := loginFrom(t, addr, "127.0.0.3")
		h := r.open(fmt.Sprintf("/w%d", i), proto.OpenDelete) // one writer per file
		r.raw(proto.EncodeRequest(proto.StreamID{0, 1}, proto.ReqWrite, writeReq(h, 0), make([]byte, 100))[:proto.RequestHeaderLen])
	}

	start := time.Now()
	r := login(t, addr)
	h := r.open("/big", proto.OpenRead)
	code, body := r.call(proto.ReqPgread, readBody(h, 0, 4<<20), nil)
	if code != proto.StatusStatus || len(body) < 4<<20 {
		t.Fatalf("pgread while others stall: status %d, %d bytes", code, len(body))
	}
	w := r.open("/mine", proto.OpenNew)
	if code, _ := r.call(proto.ReqWrite, writeReq(w, 0), make([]byte, 4<<20)); code != proto.StatusOK {
		t.Fatalf("write while others stall: status %d", code)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a normal client took %v while others stalled", took)
	}
	t.Run("one address holds at most half the pool", func(t *testing.T) {
		srv.limits.mu.Lock()
		got := srv.limits.clients["127.0.0.2"].buffers
		srv.limits.mu.Unlock()
		if got != 2 {
			t.Errorf("127.0.0.2 holds %d buffers, want 2 of 4", got)
		}
	})
}

// A readv of large segments (too big for a spare buffer) waits only for
// the pool's free half when one address holds the rest.
func TestReadvBesideStalledReaders(t *testing.T) {
	st, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "big"), patterned(48<<20))
	srv := New(Config{MaxReadChunk: 1 << 20, MaxBufferMemory: 4 << 20}, st, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	addr := ln.Addr().String()
	for range 8 {
		r := loginFrom(t, addr, "127.0.0.2")
		h := r.open("/big", proto.OpenRead)
		r.send(proto.ReqPgread, readBody(h, 0, 48<<20), nil)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.bufs.free) > 2 {
		if time.Now().After(deadline) {
			t.Fatal("stalled readers never took their half of the pool")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	r := login(t, addr)
	h := r.open("/big", proto.OpenRead)
	elems := []proto.ReadListElem{{Handle: h, Len: 900 << 10, Offset: 0}, {Handle: h, Len: 900 << 10, Offset: 10 << 20}}
	if code, body := r.call(proto.ReqReadv, [16]byte{}, readList(elems...)); code != proto.StatusOK || len(body) != 2*(16+900<<10) {
		t.Fatalf("readv beside stalled readers: status %d, %d bytes", code, len(body))
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("readv took %v beside stalled readers", took)
	}
}
