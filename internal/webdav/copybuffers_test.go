package webdav

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/tpc"
)

// heldFile is a source whose reads wait for their context: a copy that
// holds its buffer.
type heldFile struct{}

func (heldFile) ReadAt(p []byte, off int64) (int, error) { select {} }
func (heldFile) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}
func (heldFile) Stat() (store.FileInfo, error) { return store.FileInfo{Size: 4 << 20}, nil }
func (heldFile) Close() error                  { return nil }

type nullSink struct{ heldFile }

func (nullSink) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }
func (nullSink) Truncate(int64) error                     { return nil }
func (nullSink) Sync() error                              { return nil }

// TestCopyRefusedForWantOfMemory: a COPY within the store that finds
// the box's copy buffers held and the queue for them full is answered
// 503 with Retry-After and a message naming [tpc] buffer_memory, and
// nothing is written.
func TestCopyRefusedForWantOfMemory(t *testing.T) {
	buffers := tpc.NewBudget(tpc.MinBudget)
	srv, dir := newServer(t, Config{CopyBuffers: buffers})
	writeFile(t, dir, "f", []byte("data"))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range 257 { // one holds the memory, 256 wait: the queue is full
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := &tpc.Job{Src: tpc.Source{File: heldFile{}, Size: 4 << 20}, Dst: tpc.Sink{File: nullSink{}}, Buffers: buffers}
			job.Run(ctx)
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for buffers.Stats().Waiting < 256 {
		if time.Now().After(deadline) {
			t.Fatalf("queue never filled: %+v", buffers.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}

	resp, body := do(t, "COPY", srv.URL+"/store/f", nil, "Destination", srv.URL+"/store/g")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, "[tpc] buffer_memory") || !strings.Contains(body, "4.0 MiB") {
		t.Fatalf("COPY with the buffers held: %d Retry-After %q %q, want 503 naming the limit", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if _, err := os.Stat(filepath.Join(dir, "g")); err == nil {
		t.Error("the refused copy left its destination")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the refused copy left files: %v", ents)
	}
}
