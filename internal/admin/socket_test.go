package admin

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// staleSocket leaves a socket file nobody listens on, as a killed box does.
func staleSocket(t *testing.T, dir string) {
	t.Helper()
	ln, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

func TestStaleSocketReplaced(t *testing.T) {
	dir := t.TempDir()
	staleSocket(t, dir)
	_, err := NewClient(dir).Stats(context.Background())
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "refuses connections") {
		t.Fatalf("client on a stale socket: %v", err)
	}

	s := New(nil, newFake(), nil)
	ln, err := s.Listen(dir)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	go s.Serve(ln)
	if _, err := NewClient(dir).Stats(context.Background()); err != nil {
		t.Errorf("Stats: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after Shutdown: %v", err)
	}
}

func TestSecondServerRefused(t *testing.T) {
	dir := startServer(t, newFake())
	_, err := New(nil, nil, nil).Listen(dir)
	if !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second Listen: %v, want ErrRunning naming %s", err, dir)
	}
	// The first one still owns its socket.
	if _, err := NewClient(dir).Stats(context.Background()); err != nil {
		t.Errorf("first server after refused second: %v", err)
	}
}

func TestListenRefuses(t *testing.T) {
	t.Run("not a socket", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(SocketPath(dir), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := New(nil, nil, nil).Listen(dir); err == nil || !strings.Contains(err.Error(), "is not a socket") {
			t.Fatalf("Listen: %v", err)
		}
		if b, _ := os.ReadFile(SocketPath(dir)); string(b) != "mine" {
			t.Error("the file was replaced")
		}
	})
	t.Run("path too long", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
		if _, err := New(nil, nil, nil).Listen(dir); err == nil || !strings.Contains(err.Error(), "shorter state_dir") {
			t.Fatalf("Listen: %v", err)
		}
	})
}

// TestShutdownWithoutServe: a box that fails after Listen must still remove
// its socket.
func TestShutdownWithoutServe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // created by Listen
	s := New(nil, nil, nil)
	if _, err := s.Listen(dir); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir: %v %v, want 0700", fi.Mode(), err)
	}
}

func TestClientNoServer(t *testing.T) {
	dir := t.TempDir()
	_, err := NewClient(dir).Entries(context.Background(), "")
	want := "no sitebox running with state dir " + dir + " (no admin socket at " + SocketPath(dir) + ")"
	if !errors.Is(err, ErrNoServer) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
