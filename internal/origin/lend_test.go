//go:build linux

package origin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/store"
)

// TestLendMapped: a read that allows mapped pages and asks no CRCs is
// lent from a mapping of the file, the page cache's bytes themselves;
// any other reads into the buffer; the mapping goes once the file is
// closed and the last loan given back.
func TestLendMapped(t *testing.T) {
	o, dirs := newTestOrigin(t, 1, false)
	data := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	writeFile(t, filepath.Join(dirs[0], "f"), data)
	f, err := o.Open(context.Background(), "/store/f")
	if err != nil {
		t.Fatal(err)
	}
	l, ok := store.As[store.Lender](f)
	if !ok {
		t.Fatal("an origin file is no Lender")
	}
	ex := f.(*file).ex
	buf := make([]byte, 32<<10)
	// The bytes were just written: the page cache holds them.
	loan, err := l.Lend(100_000, buf, store.LendOptions{Mapped: true})
	if err != nil || !bytes.Equal(loan.Bytes, []byte(data[100_000:100_000+len(buf)])) {
		t.Fatalf("mapped lend: %v, bytes equal %v", err, bytes.Equal(loan.Bytes, []byte(data[100_000:100_000+len(buf)])))
	}
	if &loan.Bytes[0] == &buf[0] {
		t.Error("a mapped lend read into the buffer")
	}
	for name, opts := range map[string]store.LendOptions{
		"not mapped": {}, "with CRCs": {Mapped: true, CRCs: make([]uint32, 8)},
	} {
		other, err := l.Lend(4096, buf, opts)
		if err != nil || &other.Bytes[0] != &buf[0] || !bytes.Equal(other.Bytes, []byte(data[4096:4096+len(buf)])) {
			t.Errorf("%s: want a read into the buffer (err %v)", name, err)
		}
		other.Release()
	}
	// At the end: the last bytes, lent, then the end.
	tail, err := l.Lend(int64(len(data))-10, buf, store.LendOptions{Mapped: true})
	if err != nil || string(tail.Bytes) != data[len(data)-10:] {
		t.Errorf("the last 10 bytes: %q, %v", tail.Bytes, err)
	}
	tail.Release()
	end, err := l.Lend(int64(len(data)), buf, store.LendOptions{Mapped: true})
	if len(end.Bytes) != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %d bytes, %v; want none and io.EOF", len(end.Bytes), err)
	}
	// Grown since it was mapped: the bytes past the mapping are read.
	more := strings.Repeat("z", 1000)
	app, err := os.OpenFile(filepath.Join(dirs[0], "f"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.WriteString(more); err != nil {
		t.Fatal(err)
	}
	app.Close()
	grown, err := l.Lend(int64(len(data)), buf, store.LendOptions{Mapped: true})
	if string(grown.Bytes) != more || &grown.Bytes[0] != &buf[0] || !errors.Is(err, io.EOF) {
		t.Errorf("past the mapping: %d bytes (%v), want the %d appended, read", len(grown.Bytes), err, len(more))
	}
	grown.Release()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := ex.mappings.Load(); n != 1 {
		t.Errorf("closed with a loan out: %d mappings, want 1", n)
	}
	if !bytes.Equal(loan.Bytes, []byte(data[100_000:100_000+len(buf)])) {
		t.Error("a loan's bytes changed when the file closed")
	}
	loan.Release()
	if n := ex.mappings.Load(); n != 0 {
		t.Errorf("closed, every loan back: %d mappings, want 0", n)
	}
}
