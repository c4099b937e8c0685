package server

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// gatedStore's files look like a cache's: reads at offset 0 wait for the
// gate to open, and Ready says so.
type gatedStore struct {
	store.Store
	gate chan struct{}
}

func (s *gatedStore) Open(ctx context.Context, name string) (store.File, error) {
	f, err := s.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &gatedFile{File: f, gate: s.gate}, nil
}

type gatedFile struct {
	store.File
	gate chan struct{}
}

func (f *gatedFile) WillNeed([][2]int64) {}

func (f *gatedFile) Ready(ranges [][2]int64) <-chan struct{} {
	for _, r := range ranges {
		if r[0] == 0 {
			return f.gate
		}
	}
	return nil
}

func (f *gatedFile) ReadAt(p []byte, off int64) (int, error) {
	if off == 0 {
		<-f.gate
	}
	return f.File.ReadAt(p, off)
}

// A readv whose data is still arriving does not hold up the readvs
// queued behind it whose data is there: their answers go first.
func TestReadvWaitingForDataIsPassed(t *testing.T) {
	st, dir := newOriginStore(t, true)
	writeTestFile(t, filepath.Join(dir, "f"), patterned(1<<20))
	gs := &gatedStore{Store: st, gate: make(chan struct{})}
	var once sync.Once
	open := func() { once.Do(func() { close(gs.gate) }) }
	t.Cleanup(open)
	r := login(t, startServer(t, Config{}, gs))
	h := r.open("/f", proto.OpenRead)
	slow := r.send(proto.ReqReadv, [16]byte{}, readList(proto.ReadListElem{Handle: h, Len: 100, Offset: 0}))
	fast := r.send(proto.ReqReadv, [16]byte{}, readList(proto.ReadListElem{Handle: h, Len: 100, Offset: 8192}))
	timer := time.AfterFunc(5*time.Second, open) // the test fails, not hangs
	defer timer.Stop()
	hdr, _ := r.recv()
	if hdr.Stream != fast {
		t.Fatalf("first answer for stream %x, want the readv whose data was there (%x)", hdr.Stream, fast)
	}
	open()
	if hdr, _ = r.recv(); hdr.Stream != slow || hdr.Status != proto.StatusOK {
		t.Fatalf("then stream %x status %d, want %x ok", hdr.Stream, hdr.Status, slow)
	}
}
