package mount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
)

// failingStore is a server every call to which fails with err; it
// counts the calls.
type failingStore struct {
	err                   error
	stats, lists, creates atomic.Int32
}

func (s *failingStore) Stat(context.Context, string) (store.FileInfo, error) {
	s.stats.Add(1)
	return store.FileInfo{}, s.err
}

func (s *failingStore) Open(context.Context, string) (store.File, error) { return nil, s.err }

func (s *failingStore) List(context.Context, string) ([]store.FileInfo, error) {
	s.lists.Add(1)
	return nil, s.err
}

func (s *failingStore) Create(context.Context, string, store.CreateOptions) (store.WritableFile, error) {
	s.creates.Add(1)
	return nil, s.err
}

func testFsys(t *testing.T, s store.Store) (*fsys, *View) {
	v := &View{Key: "k", Who: "test", Meta: s, Data: s}
	return newFsys(Config{Identities: Single{V: v}, Root: "/", TempDir: t.TempDir(), DirTTL: time.Minute, DirEntries: 100,
		Log: slog.New(slog.DiscardHandler)}), v
}

var errGone = fmt.Errorf("%w: the server could not be reached for 30s", store.ErrUnavailable)

// A listing that failed because the server could not be reached (the
// client waited --timeout already) is not followed by a stat of the
// name, which would wait as long again; a refusal to list is.
func TestEntryOfUnreachableServer(t *testing.T) {
	s := &failingStore{err: errGone}
	m, v := testFsys(t, s)
	if _, err := m.entry(context.Background(), v, "/", "a"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("entry: %v, want ErrUnavailable", err)
	}
	if s.lists.Load() != 1 || s.stats.Load() != 0 {
		t.Errorf("%d lists and %d stats; want the listing only", s.lists.Load(), s.stats.Load())
	}
	s = &failingStore{err: store.ErrPermission}
	m, v = testFsys(t, s)
	m.entry(context.Background(), v, "/", "a")
	if s.stats.Load() != 1 {
		t.Errorf("a refused listing: %d stats; want the name asked about alone", s.stats.Load())
	}
}

// A file whose upload failed at close(2) because the server could not
// be reached is not uploaded again at the release that follows (it
// would hold the release, and an unmount, another --timeout); after a
// failure of another kind the last close tries once more. Either way
// the failure is reported.
func TestReleaseAfterFailedUpload(t *testing.T) {
	for _, tc := range []struct {
		err     error
		creates int32
	}{{errGone, 1}, {store.ErrPermission, 2}} {
		s := &failingStore{err: tc.err}
		m, v := testFsys(t, s)
		ino, _ := m.nodes.lookup(rootIno, "f")
		w, _, err := m.acquireWriter(ino, v)
		if err != nil {
			t.Fatal(err)
		}
		w.writeAt([]byte("data"), 0)
		if err := w.upload(context.Background()); !errors.Is(err, tc.err) {
			t.Fatalf("upload: %v, want %v", err, tc.err)
		}
		if err := m.releaseWriter(context.Background(), w); !errors.Is(err, tc.err) {
			t.Errorf("release after a failed upload (%v): %v; want the failure reported", tc.err, err)
		}
		if got := s.creates.Load(); got != tc.creates {
			t.Errorf("after %v: %d uploads tried, want %d", tc.err, got, tc.creates)
		}
	}
}
