package server

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// dirNames lists dir's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// waitEmpty waits until dir holds nothing (a session's end is cleaned up
// after the connection closes).
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(dirNames(t, dir)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("left behind: %v", dirNames(t, dir))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeReq(h [4]byte, off int64) [16]byte { return readBody(h, off, 0) }

func TestPoscKeptOnlyOnClose(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	r := login(t, addr)
	h := r.open("/p", proto.OpenNew|proto.OpenPosc)
	if st, body := r.call(proto.ReqWrite, writeReq(h, 0), []byte("hello")); st != proto.StatusOK {
		t.Fatalf("write: %d %x", st, body)
	}
	if _, err := os.Stat(filepath.Join(dir, "p")); !os.IsNotExist(err) {
		t.Fatalf("file under its final name before close: %v", err)
	}
	st, body := r.call(proto.ReqDirlist, [16]byte{}, []byte("/"))
	if st != proto.StatusOK || strings.Contains(string(body), uploadPrefix) {
		t.Fatalf("listing shows the upload in progress: %q", body)
	}
	if st, _ := r.call(proto.ReqClose, handleBody(h), nil); st != proto.StatusOK {
		t.Fatalf("close: status %d", st)
	}
	got, err := os.ReadFile(filepath.Join(dir, "p"))
	if err != nil || string(got) != "hello" {
		t.Fatalf("after close: %q %v", got, err)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Fatalf("directory holds %v, want only p", names)
	}
	// kXR_new still refuses an existing file.
	var ob [16]byte
	binary.BigEndian.PutUint16(ob[2:], proto.OpenNew|proto.OpenPosc)
	st, body = r.call(proto.ReqOpen, ob, []byte("/p"))
	r.wantErr("kXR_new|kXR_posc over an existing file", st, body, proto.ErrItExists)
}

func TestPoscCutLeavesNothing(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	r := login(t, addr)
	h := r.open("/p", proto.OpenDelete|proto.OpenPosc)
	if st, _ := r.call(proto.ReqWrite, writeReq(h, 0), make([]byte, 1<<20)); st != proto.StatusOK {
		t.Fatal("write failed")
	}
	r.c.Close()
	waitEmpty(t, dir)
}

// fullNS is a store whose writes fail with ErrNoSpace but that can rename
// and remove, as the origin can.
type fullNS struct {
	fullStore
	store.Namespace
}

func TestPoscFailedWriteLeavesNothing(t *testing.T) {
	st, dir := newOriginStore(t, false)
	addr := startServer(t, Config{}, fullNS{fullStore{st}, mustNS(st)})
	r := login(t, addr)
	h := r.open("/p", proto.OpenNew|proto.OpenPosc)
	code, body := r.call(proto.ReqWrite, writeReq(h, 0), make([]byte, 100))
	r.wantErr("write to a full disk", code, body, proto.ErrNoSpace)
	if _, msg := errOf(body); strings.Contains(msg, uploadPrefix) {
		t.Fatalf("write error %q shows the temporary name", msg)
	}
	code, body = r.call(proto.ReqClose, handleBody(h), nil)
	if code != proto.StatusError {
		t.Fatalf("close after a failed write: status %d, want an error", code)
	}
	if _, msg := errOf(body); !strings.Contains(msg, "not kept") {
		t.Fatalf("close error %q does not say the file was not kept", msg)
	}
	waitEmpty(t, dir)
}

func mustNS(s store.Store) store.Namespace {
	ns, _ := store.As[store.Namespace](s)
	return ns
}
