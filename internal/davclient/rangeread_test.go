package davclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"sitebox/internal/store"
)

// TestReadRange: a range streamed as it arrives is the file's bytes, one
// GET; a server that ignores the range is read from the range's start;
// an answer with another range, or one that ends early, is an error.
func TestReadRange(t *testing.T) {
	data := randomData(1 << 20)
	read := func(f *file, off, n int64) ([]byte, error) {
		body, err := f.ReadRange(context.Background(), off, n)
		if err != nil {
			return nil, err
		}
		defer body.Close()
		return io.ReadAll(body)
	}
	f, rc := rangeOrigin(t, data, nil)
	got, err := read(f, 1000, 300_000)
	if err != nil || string(got) != string(data[1000:301_000]) || rc.gets() != 1 {
		t.Fatalf("ReadRange: %d bytes, %v, %d GETs", len(got), err, rc.gets())
	}
	if _, err := f.ReadRange(context.Background(), 1<<20-10, 20); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a range past the end: %v, want ErrInvalid", err)
	}

	whole, _ := rangeOrigin(t, data, func(w http.ResponseWriter, _ [][2]int64) { w.Write(data) })
	if got, err := read(whole, 5000, 100); err != nil || string(got) != string(data[5000:5100]) {
		t.Errorf("from a server ignoring ranges: %d bytes, %v", len(got), err)
	}

	other, _ := rangeOrigin(t, data, func(w http.ResponseWriter, _ [][2]int64) {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-99/%d", len(data)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[:100])
	})
	if _, err := read(other, 5000, 100); !errors.Is(err, store.ErrIO) {
		t.Errorf("another range answered: %v, want ErrIO", err)
	}

	short, _ := rangeOrigin(t, data, func(w http.ResponseWriter, rs [][2]int64) {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", rs[0][0], rs[0][1], len(data)))
		w.Header().Set("Content-Length", fmt.Sprint(rs[0][1]-rs[0][0]+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[rs[0][0] : rs[0][0]+10])
	})
	if got, err := read(short, 5000, 100); err == nil {
		t.Errorf("a range ended early: %d bytes and no error", len(got))
	}
}
