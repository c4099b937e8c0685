package store

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// memFile is a file of bytes in memory.
type memFile struct{ b []byte }

func (f memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (f memFile) Stat() (FileInfo, error) { return FileInfo{Size: int64(len(f.b))}, nil }
func (f memFile) Close() error            { return nil }

// lendingFile lends its bytes from memory.
type lendingFile struct{ memFile }

func (f lendingFile) Lend(off int64, buf []byte, _ LendOptions) (Loan, error) {
	end := min(off+int64(len(buf)), int64(len(f.b)))
	if end < off+int64(len(buf)) {
		return Lent(f.b[off:end], nil, nil), io.EOF
	}
	return Lent(f.b[off:end], nil, nil), nil
}

// wrapped wraps a file and offers Lender when the inner file does, as
// the auth guard's file wrappers do.
type wrapped struct{ File }

func (w wrapped) As(target any) bool {
	l, _ := As[Lender](w.File)
	return Offer[Lender](w.File, target, l)
}

// A wrapper offers a file's Lender through As exactly when the file has
// one, and LenderOf answers every file: by lending, or by reading into
// the buffer, saying io.EOF only where the file ends.
func TestLenderThroughWrappers(t *testing.T) {
	data := []byte("0123456789")
	if _, ok := As[Lender](wrapped{memFile{data}}); ok {
		t.Fatal("a wrapper offered a Lender its file does not have")
	}
	l, ok := As[Lender](wrapped{lendingFile{memFile{data}}})
	if !ok {
		t.Fatal("a wrapper hid its file's Lender")
	}
	buf := make([]byte, 4)
	if loan, err := l.Lend(2, buf, LendOptions{}); err != nil || !bytes.Equal(loan.Bytes, data[2:6]) || &loan.Bytes[0] == &buf[0] {
		t.Fatalf("lent %q, %v; want %q lent from the file", loan.Bytes, err, data[2:6])
	}
	r := LenderOf(wrapped{memFile{data}})
	for _, tc := range []struct {
		off  int64
		want string
		err  error
	}{{0, "0123", nil}, {6, "6789", nil}, {8, "89", io.EOF}, {10, "", io.EOF}} {
		loan, err := r.Lend(tc.off, buf, LendOptions{})
		if string(loan.Bytes) != tc.want || !errors.Is(err, tc.err) || err == nil && tc.err != nil {
			t.Errorf("read at %d: %q, %v; want %q, %v", tc.off, loan.Bytes, err, tc.want, tc.err)
		}
		loan.Release()
	}
}
