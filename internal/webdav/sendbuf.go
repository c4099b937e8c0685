package webdav

import (
	"io"
	"net/http"
	"sync"
)

// sendPiece is how much of a file an https GET reads at a time. Over
// TLS there is no sendfile: net/http copies through 32 KiB buffers, one
// read(2) per two TLS records. Reading 128 KiB at a time takes a
// quarter of the reads (an HTTP-TPC source serves whole files this way)
// while the piece still sits in the CPU's cache when it is encrypted.
const sendPiece = 128 << 10

// sendBuffers keeps the pieces of the GETs being answered over TLS.
type sendBuffers struct{ pool sync.Pool }

func (s *sendBuffers) get() *[]byte {
	if p, ok := s.pool.Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, sendPiece)
	return &b
}

func (s *sendBuffers) put(p *[]byte) { s.pool.Put(p) }

// sendWriter copies a response body with a buffer of sendPiece bytes;
// what it writes goes through the ResponseWriter it wraps.
type sendWriter struct {
	http.ResponseWriter
	bufs *sendBuffers
}

func (s sendWriter) ReadFrom(src io.Reader) (int64, error) {
	p := s.bufs.get()
	defer s.bufs.put(p)
	// The struct hides ReadFrom, so the copy uses the buffer given.
	return io.CopyBuffer(struct{ io.Writer }{s.ResponseWriter}, src, *p)
}

func (s sendWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
