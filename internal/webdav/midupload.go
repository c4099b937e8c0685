package webdav

import (
	"io"
	"net/http"
	"time"
)

// storeWriteError is an upload the store stopped taking (a full disk, an
// I/O error) while the client was still sending its body.
type storeWriteError struct{ err error }

func (e *storeWriteError) Error() string { return e.err.Error() }
func (e *storeWriteError) Unwrap() error { return e.err }

// Bounds on what a failed upload's remaining body may cost the box.
const (
	lingerBytes = 16 << 20
	lingerTime  = 2 * time.Second
)

// failMidUpload answers an upload that failed on the box's side before
// its body was read. Closing at once would leave the rest of the body
// unread in the socket, and the kernel answers that with a reset, which
// can reach the client before the error: curl then reports "connection
// reset" instead of 507. So the answer goes out first, the connection is
// marked to close, and the body is read and dropped for a bounded time
// and size so that the client sees the answer and stops sending.
func (h *Handler) failMidUpload(w http.ResponseWriter, r *http.Request, err error) {
	rc := http.NewResponseController(w)
	_ = rc.EnableFullDuplex() // HTTP/1.x: the body stays readable after the answer
	w.Header().Set("Connection", "close")
	h.fail(w, r, err)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, lingerBytes))
}
