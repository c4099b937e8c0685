package server

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/units"
	"sitebox/internal/xrootd/proto"
)

// A logged-in client that holds nothing is disconnected after IdleTimeout;
// one with an open file is kept however long it stays quiet.
func TestIdleTimeout(t *testing.T) {
	addr, dir := testEnv(t, Config{Settings: Settings{IdleTimeout: units.Duration(200 * time.Millisecond)}})
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))

	idle := login(t, addr)
	busy := login(t, addr)
	h := busy.open("/f", proto.OpenRead)

	time.Sleep(time.Second)
	idle.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle.c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read returned %v, want EOF", err)
	}
	st, body := busy.call(proto.ReqRead, readBody(h, 0, 4), nil)
	if st != proto.StatusOK || string(body) != "data" {
		t.Fatalf("busy connection after the idle period: status %d %q", st, body)
	}
}
