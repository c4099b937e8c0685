package server

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// slowStatStore holds a stat of a path ending in "slow" until the gate
// opens or the request's context ends, saying on started when one began.
type slowStatStore struct {
	store.Store
	started chan struct{}
	gate    chan struct{}
}

func newSlowStatStore(t *testing.T) *slowStatStore {
	st, dir := newOriginStore(t, true)
	writeTestFile(t, filepath.Join(dir, "fast"), []byte("fast"))
	return &slowStatStore{Store: st, started: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (s *slowStatStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	if strings.HasSuffix(name, "slow") {
		s.started <- struct{}{}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return store.FileInfo{}, ctx.Err()
		}
	}
	return s.Store.Stat(ctx, name)
}

// Requests that take long (a stat or open going upstream) do not hold up
// the requests a client sends behind them on the same connection: every
// thread of a client shares it. All are answered.
func TestSlowRequestsDoNotHoldUpOthers(t *testing.T) {
	st := newSlowStatStore(t)
	r := login(t, startServer(t, Config{}, st))
	var slow []proto.StreamID
	for range 3 {
		slow = append(slow, r.send(proto.ReqStat, [16]byte{}, []byte("/slow")))
		<-st.started
		// Answered while every slow stat so far is still waiting.
		if status, body := r.call(proto.ReqStat, [16]byte{}, []byte("/fast")); status != proto.StatusOK {
			code, msg := errOf(body)
			t.Fatalf("stat /fast behind a slow stat: status %d, error %d %q", status, code, msg)
		}
	}
	close(st.gate)
	got := map[proto.StreamID]uint16{}
	for range slow {
		h, _ := r.recv()
		got[h.Stream] = h.Status
	}
	for i, sid := range slow {
		if status, ok := got[sid]; !ok || status != proto.StatusError {
			t.Errorf("slow stat %d: answered %v, status %d; want kXR_error (no such file)", i, ok, status)
		}
	}
	// The session reads on as before.
	if status, _ := r.call(proto.ReqStat, [16]byte{}, []byte("/fast")); status != proto.StatusOK {
		t.Errorf("stat /fast after the slow ones: status %d", status)
	}
}

// Namespace changes keep their order when the first is slow: the second
// waits its turn, and a stat sent after them both is answered meanwhile.
func TestSlowNamespaceChangeKeepsOrder(t *testing.T) {
	st, dir := newOriginStore(t, false)
	gate := make(chan struct{})
	r := login(t, startServer(t, Config{}, &slowMkdirStore{namespaceStore: st.(namespaceStore), gate: gate}))
	first := r.send(proto.ReqMkdir, [16]byte{}, []byte("/a"))
	second := r.send(proto.ReqMkdir, [16]byte{}, []byte("/a/b")) // needs /a
	if status, _ := r.call(proto.ReqStat, [16]byte{}, []byte("/")); status != proto.StatusOK {
		t.Fatalf("stat / behind a slow mkdir: status %d", status)
	}
	close(gate)
	got := map[proto.StreamID]uint16{}
	for range 2 {
		h, _ := r.recv()
		got[h.Stream] = h.Status
	}
	if got[first] != proto.StatusOK || got[second] != proto.StatusOK {
		t.Fatalf("mkdir /a: %d, mkdir /a/b: %d; want both kXR_ok", got[first], got[second])
	}
	if fi, err := os.Stat(filepath.Join(dir, "a", "b")); err != nil || !fi.IsDir() {
		t.Fatalf("/a/b is not a directory: %v", err)
	}
}

// slowMkdirStore holds a mkdir of "/a" until the gate opens.
type slowMkdirStore struct {
	namespaceStore
	gate chan struct{}
}

type namespaceStore interface {
	store.Store
	store.Namespace
}

func (s *slowMkdirStore) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	if name == "/a" {
		<-s.gate
	}
	return s.namespaceStore.Mkdir(ctx, name, perm, parents)
}
