package auth

import (
	"context"

	"sitebox/internal/store"
)

// The files of an integrity-protected namespace opened over a connection
// without TLS come back as store.ChecksumRequirer: the frontends then
// refuse to move their data without per-page checksums.
var (
	_ store.ChecksumRequirer = integrityFile{}
	_ store.ChecksumRequirer = integrityWritable{}
)

// integrityFile marks a file as needing checksummed reads. Embedding the
// store.File interface hides the inner file's SendFiler on purpose:
// sendfile(2) would bypass the checksums.
type integrityFile struct{ store.File }

func (integrityFile) RequiresChecksums() bool { return true }

// As offers the inner file's Lender (store.Capable): lent bytes carry
// their page checksums where asked, so a checksummed read keeps the fast
// path.
func (f integrityFile) As(target any) bool {
	l, _ := store.As[store.Lender](f.File)
	return store.Offer(f.File, target, l)
}

// integrityCtxFile keeps store.ContextReaderAt of the inner file.
type integrityCtxFile struct {
	integrityFile
	cr store.ContextReaderAt
}

func (f integrityCtxFile) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	return f.cr.ReadAtContext(ctx, p, off)
}

// markIntegrity wraps f as integrityFile, keeping ContextReaderAt.
func markIntegrity(f store.File) store.File {
	if cr, ok := f.(store.ContextReaderAt); ok {
		return integrityCtxFile{integrityFile{f}, cr}
	}
	return integrityFile{f}
}

// integrityWritable marks a file being written in an integrity-protected
// namespace over a plain connection: the root:// frontend then accepts
// only checksummed writes (kXR_pgwrite) to it.
type integrityWritable struct{ store.WritableFile }

func (integrityWritable) RequiresChecksums() bool { return true }
