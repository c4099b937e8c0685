package webdav

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/dio"
)

// A PUT to a local disk writes its body past the page cache, all but
// the last, partial buffer, and lands exactly the bytes sent.
func TestPutWritesPastPageCache(t *testing.T) {
	srv, dir := newServer(t, Config{})
	if !dio.WritesDirect(dir) {
		t.Skip("the test directory is not on a local disk with O_DIRECT")
	}
	data := make([]byte, 5<<20+3)
	rand.Read(data)
	if resp, body := do(t, "PUT", srv.URL+"/store/up", bytes.NewReader(data)); resp.StatusCode != 201 {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	f, err := os.Open(filepath.Join(dir, "up"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if r, err := dio.Resident(f); err != nil || r > 0.25 {
		t.Errorf("%.0f%% of the uploaded file is in the page cache (%v)", 100*r, err)
	}
	if got, err := os.ReadFile(f.Name()); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("uploaded file: %v; equal %v", err, bytes.Equal(got, data))
	}
}
