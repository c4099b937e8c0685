package server

import (
	"context"
	"encoding/binary"
	"net"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
)

// A draining server finishes the transfer in progress (reads and the
// close of an open file), diverts a new open (kXR_wait, or kXR_redirect
// with DrainRedirect), refuses new connections, and ends once idle.
func TestDrainLetsTransfersFinish(t *testing.T) {
	for _, tc := range []struct {
		name          string
		drainRedirect string
		want          uint16
	}{
		{"wait", "", proto.StatusWait},
		{"redirect", "root://director.example.org:1094", proto.StatusRedirect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, dir := newOriginStore(t, false)
			data := patterned(1 << 20)
			writeTestFile(t, filepath.Join(dir, "f.bin"), data)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := New(Config{Settings: Settings{DrainRedirect: tc.drainRedirect}, DrainWait: 2 * time.Second}, st, nil)
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			addr := ln.Addr().String()

			c := login(t, addr)
			h := c.open("/f.bin", proto.OpenRead)
			drained := make(chan error, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go func() { drained <- srv.Drain(ctx) }()
			waitDraining(t, srv)

			if st, body := c.call(proto.ReqRead, readBody(h, 0, 4096), nil); st != proto.StatusOK || len(body) != 4096 {
				t.Fatalf("read during drain: status %d, %d bytes", st, len(body))
			}
			st2, body := c.call(proto.ReqOpen, [16]byte{}, []byte("/f.bin"))
			if st2 != tc.want {
				t.Fatalf("open during drain: status %d, want %d", st2, tc.want)
			}
			if tc.want == proto.StatusWait && binary.BigEndian.Uint32(body) != 2 {
				t.Errorf("wait of %d s, want 2", binary.BigEndian.Uint32(body))
			}
			if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				t.Error("a new connection was accepted while draining")
			}
			select {
			case <-drained:
				t.Fatal("drain ended while a file was open")
			default:
			}
			if st, _ := c.call(proto.ReqClose, handleBody(h), nil); st != proto.StatusOK {
				t.Fatalf("close during drain: status %d", st)
			}
			select {
			case err := <-drained:
				if err != nil {
					t.Errorf("drain: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("drain did not end once the session was idle")
			}
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
}

func waitDraining(t *testing.T, srv *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !srv.draining.Load() {
		if time.Now().After(deadline) {
			t.Fatal("never draining")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
