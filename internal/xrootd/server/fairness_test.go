package server

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
)

// Clients that start big pgreads and never read the answers hold at most
// their own share of the buffers: once the pool is empty, others are
// served with spare buffers, promptly.
func TestStalledReadersDoNotStallOthers(t *testing.T) {
	st, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "big"), patterned(48<<20))
	srv := New(Config{MaxReadChunk: 1 << 20, MaxBufferMemory: 2 << 20}, st, nil)
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
	for range 4 {
		r := login(t, addr)
		h := r.open("/big", proto.OpenRead)
		r.send(proto.ReqPgread, readBody(h, 0, 48<<20), nil) // and never read
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.bufs.free) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("stalled readers never took the pool's buffers")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 4 { // and writers that send a header and go silent
		r := login(t, addr)
		h := r.open("/w", proto.OpenDelete)
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
}
