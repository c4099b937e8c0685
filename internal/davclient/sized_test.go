package davclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"sitebox/internal/store"
)

// TestUploadOfKnownSize: an upload created with its size sends it as
// Content-Length (no chunks) and the server gets the bytes exactly; one
// whose body ends short fails, and the server sees its body break rather
// than end, so it never takes a short file for a whole one.
func TestUploadOfKnownSize(t *testing.T) {
	type seen struct {
		length  int64
		chunked bool
		body    []byte
		err     error
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		got <- seen{r.ContentLength, len(r.TransferEncoding) > 0, b, err}
		if err == nil {
			w.WriteHeader(http.StatusCreated)
		}
	}))
	defer srv.Close()
	fs, err := New(srv.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 40000)

	f, err := fs.Create(ctx, "/whole", store.CreateOptions{Truncate: true, Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 100000 {
		if _, err := f.WriteAt(data[off:min(off+100000, len(data))], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s := <-got
	if s.err != nil || s.chunked || s.length != int64(len(data)) || !bytes.Equal(s.body, data) {
		t.Fatalf("server saw length %d, chunked %v, %d bytes (equal %v), err %v", s.length, s.chunked, len(s.body), bytes.Equal(s.body, data), s.err)
	}

	f, err = fs.Create(ctx, "/short", store.CreateOptions{Truncate: true, Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data[:1000], 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err == nil {
		t.Fatal("an upload that ended short of its size succeeded")
	}
	if s := <-got; s.err == nil {
		t.Fatalf("the server read a short body (%d of %d bytes) without error", len(s.body), s.length)
	}
}
