package mount

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
)

// filesStore serves files from a map and counts the opens, refusing the
// paths in denied.
type filesStore struct {
	mu     sync.Mutex
	files  map[string]string
	denied map[string]bool
	opens  map[string]int
}

func (s *filesStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	return store.FileInfo{}, store.ErrNotFound
}

func (s *filesStore) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	return nil, store.ErrNotFound
}

func (s *filesStore) Open(ctx context.Context, name string) (store.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opens == nil {
		s.opens = map[string]int{}
	}
	s.opens[name]++
	if s.denied[name] {
		return nil, store.ErrPermission
	}
	body, ok := s.files[name]
	if !ok {
		return nil, store.ErrNotFound
	}
	return bytesFile{bytes.NewReader([]byte(body))}, nil
}

func (s *filesStore) openCount(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens[name]
}

type bytesFile struct{ *bytes.Reader }

func (f bytesFile) Stat() (store.FileInfo, error) { return store.FileInfo{Size: f.Size()}, nil }
func (f bytesFile) Close() error                  { return nil }

var mtime = time.Unix(1_700_000_000, 0)

func fileInfo(name string, size int) store.FileInfo {
	return store.FileInfo{Name: name, Size: int64(size), ModTime: mtime}
}

// startSmall runs a smallFiles until the test ends.
func startSmall(t *testing.T, maxFile, maxBytes int64) *smallFiles {
	t.Helper()
	s := newSmallFiles(maxFile, maxBytes, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

func TestSmallFilesServeOpensFromOneListing(t *testing.T) {
	st := &filesStore{files: map[string]string{"/d/a.h": "int a;\n", "/d/b.h": "int b;\n", "/d/big.dat": strings.Repeat("x", 100)}}
	v := &View{Key: "alice", Meta: st, Data: st}
	s := startSmall(t, 64, 1<<20)
	fis := []store.FileInfo{fileInfo("a.h", 7), fileInfo("b.h", 7), fileInfo("big.dat", 100), {Name: "sub", Mode: 1 << 31}}
	s.readDir(v, "/d", fis)
	ctx := context.Background()
	for range 3 {
		data, ok := s.get(ctx, v, "/d/a.h", fis[0])
		if !ok || string(data) != "int a;\n" {
			t.Fatalf("get /d/a.h = %q, %v; want its content", data, ok)
		}
	}
	if _, ok := s.get(ctx, v, "/d/b.h", fis[1]); !ok {
		t.Fatal("/d/b.h was not read with its directory")
	}
	if n := st.openCount("/d/a.h"); n != 1 {
		t.Errorf("/d/a.h opened %d times on the server, want 1", n)
	}
	if n := st.openCount("/d/big.dat"); n != 0 {
		t.Errorf("a file over the size limit was read ahead (%d opens)", n)
	}
	if _, ok := s.get(ctx, v, "/d/big.dat", fis[2]); ok {
		t.Error("a file over the size limit was served from memory")
	}
	// Listed again unchanged: nothing is read again.
	s.readDir(v, "/d", fis)
	s.get(ctx, v, "/d/a.h", fis[0])
	if n := st.openCount("/d/a.h"); n != 1 {
		t.Errorf("an unchanged file was read again (%d opens)", n)
	}
}

func TestSmallFilesPerCredential(t *testing.T) {
	st := &filesStore{files: map[string]string{"/p/secret": "alice's"}}
	bobStore := &filesStore{files: st.files, denied: map[string]bool{"/p/secret": true}}
	alice := &View{Key: "alice", Meta: st, Data: st}
	bob := &View{Key: "bob", Meta: bobStore, Data: bobStore}
	s := startSmall(t, 64, 1<<20)
	fi := fileInfo("secret", 7)
	s.readDir(alice, "/p", []store.FileInfo{fi})
	ctx := context.Background()
	if _, ok := s.get(ctx, alice, "/p/secret", fi); !ok {
		t.Fatal("alice's read was not kept")
	}
	if data, ok := s.get(ctx, bob, "/p/secret", fi); ok {
		t.Fatalf("bob was served %q, read with alice's credential", data)
	}
	s.readDir(bob, "/p", []store.FileInfo{fi})
	if data, ok := s.get(ctx, bob, "/p/secret", fi); ok {
		t.Fatalf("bob was served %q though the server refuses him", data)
	}
	if bobStore.openCount("/p/secret") != 1 {
		t.Error("bob's read ahead did not ask the server with bob's credential")
	}
}

func TestSmallFilesChangedFile(t *testing.T) {
	st := &filesStore{files: map[string]string{"/d/f": "old"}}
	v := &View{Key: "k", Meta: st, Data: st}
	s := startSmall(t, 64, 1<<20)
	fi := fileInfo("f", 3)
	s.readDir(v, "/d", []store.FileInfo{fi})
	ctx := context.Background()
	if _, ok := s.get(ctx, v, "/d/f", fi); !ok {
		t.Fatal("not kept")
	}
	newer := fi
	newer.ModTime = mtime.Add(time.Second)
	if _, ok := s.get(ctx, v, "/d/f", newer); ok {
		t.Error("served after the listing gave the file a new mtime")
	}
	// A listing that disagrees with the bytes (the file grew since):
	// nothing is kept.
	st.files["/d/g"] = "longer than listed"
	g := fileInfo("g", 3)
	s.readDir(v, "/d", []store.FileInfo{g})
	if _, ok := s.get(ctx, v, "/d/g", g); ok {
		t.Error("a file whose size differs from its listing was served")
	}
	// Changed through the mount: forgotten, as are the files below a
	// directory changed.
	s.readDir(v, "/d", []store.FileInfo{fi})
	s.forget("/d")
	if _, ok := s.get(ctx, v, "/d/f", fi); ok {
		t.Error("served after its directory was changed through the mount")
	}
}

func TestSmallFilesMemoryBound(t *testing.T) {
	files := map[string]string{}
	var fis []store.FileInfo
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files["/d/"+n] = strings.Repeat(n, 40)
		fis = append(fis, fileInfo(n, 40))
	}
	st := &filesStore{files: files}
	v := &View{Key: "k", Meta: st, Data: st}
	s := startSmall(t, 64, 100)
	s.readDir(v, "/d", fis)
	for _, fi := range fis { // wait for every read
		s.get(context.Background(), v, "/d/"+fi.Name, fi)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.byKey); n == 0 || n > 2 {
		t.Errorf("%d files of 40 bytes held in 100 bytes, want 1 or 2", n)
	}
	if s.held > 100 {
		t.Errorf("%d bytes held, over the 100 allowed", s.held)
	}
}

func TestSmallFilesOff(t *testing.T) {
	st := &filesStore{files: map[string]string{"/d/a": "a"}}
	v := &View{Key: "k", Meta: st, Data: st}
	s := startSmall(t, 0, 1<<20)
	s.readDir(v, "/d", []store.FileInfo{fileInfo("a", 1)})
	if _, ok := s.get(context.Background(), v, "/d/a", fileInfo("a", 1)); ok || st.openCount("/d/a") != 0 {
		t.Error("small files were read with the limit at 0")
	}
}
