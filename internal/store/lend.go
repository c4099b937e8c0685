package store

import (
	"errors"
	"io"
)

// CRCPage is the unit of a loan's checksums: a CRC32C per 4 KiB.
const CRCPage = 4096

// Lender is implemented by files that can answer a read with bytes they
// hold in memory already — a cache's fetch buffers, its checked pages in
// the kernel's page cache — so a frontend hands them to its socket write
// instead of copying them into a buffer first, and with the CRC32Cs the
// file computed on the way, so it need not pass over them again. A
// wrapper offers it (Capable) exactly when the file it wraps does; find
// it with As or LenderOf.
type Lender interface {
	// Lend answers a read of up to len(buf) bytes at off: with bytes the
	// file holds, lent until the loan is released, or else read into
	// buf. The answer is shorter than asked only where the file ends
	// (err is io.EOF) or where a lent buffer ends (err is nil: the rest
	// is asked for again). buf may be written again only after Release.
	Lend(off int64, buf []byte, opts LendOptions) (Loan, error)
}

// LendOptions say what a Lend may answer with besides the bytes.
type LendOptions struct {
	// CRCs, when not nil and off is a multiple of CRCPage, asks for the
	// CRC32C of each CRCPage of the answer from its start (the last of
	// what remains); it must have room for one per CRCPage of buf. A
	// lender gives them where it knows them without a second pass over
	// the bytes, and always with a loan of mapped pages (Mapped), which
	// the caller may not read to compute them.
	CRCs []uint32
	// Mapped allows a loan of pages of a mapped file. The caller may
	// only pass such bytes to system calls (a writev on a plain socket),
	// never read them in user space: a user-space access to a page the
	// file no longer has kills the process (SIGBUS), where a system call
	// fails with EFAULT.
	Mapped bool
}

// Loan is a Lender's answer: Bytes, with their CRCs when asked and known
// (a prefix of LendOptions.CRCs, else nil), valid until Release.
type Loan struct {
	Bytes   []byte
	CRCs    []uint32
	release func()
}

// Lent is a loan of b with its CRCs (or nil); release, if not nil, gives
// b back to the lender.
func Lent(b []byte, crcs []uint32, release func()) Loan {
	return Loan{Bytes: b, CRCs: crcs, release: release}
}

// Release gives the loan's bytes back. It must be called once for every
// loan, however short.
func (l Loan) Release() {
	if l.release != nil {
		l.release()
	}
}

// LenderOf is f's Lender (see As), or one that reads into the buffer, so
// every open file answers Lend.
func LenderOf(f File) Lender {
	if l, ok := As[Lender](f); ok {
		return l
	}
	return reader{f}
}

// reader lends nothing: it reads into the buffer.
type reader struct{ f File }

func (r reader) Lend(off int64, buf []byte, _ LendOptions) (Loan, error) {
	n, err := r.f.ReadAt(buf, off)
	switch {
	case n == len(buf):
		err = nil // a full read says nothing of the end yet
	case err != nil && !errors.Is(err, io.EOF):
		return Loan{}, err
	}
	return Lent(buf[:n], nil, nil), err
}
