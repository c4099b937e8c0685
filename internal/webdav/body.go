package webdav

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// stallError is an upload body that stopped arriving: 408.
type stallError struct{ timeout time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("request body stalled: no data for %v; upload abandoned", e.timeout)
}

// progressBody reads a request body with a read deadline that moves with
// progress: every read of the connection may wait at most timeout, so an
// upload may take as long as it keeps coming while one that stops is cut
// off and releases its connection, buffer and temporary file.
type progressBody struct {
	rc      *http.ResponseController
	body    io.Reader
	timeout time.Duration
	armed   bool // the server supports read deadlines
	eof     bool // the whole body was read
}

func newProgressBody(w http.ResponseWriter, body io.Reader, timeout time.Duration) *progressBody {
	return &progressBody{rc: http.NewResponseController(w), body: body, timeout: timeout, armed: true}
}

func (b *progressBody) Read(p []byte) (int, error) {
	if b.armed {
		if err := b.rc.SetReadDeadline(time.Now().Add(b.timeout)); err != nil {
			b.armed = false // e.g. a test recorder: nothing to bound
		}
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		err = &stallError{b.timeout}
	}
	return n, err
}

// done clears the deadline once the whole body is read: net/http keeps
// reading the connection in the background while the handler finishes, and
// a deadline expiring there would cancel the request's context. A body
// left unread keeps its deadline, which stops net/http from waiting for
// the rest of it after the handler (it then closes the connection).
func (b *progressBody) done() {
	if b.armed && b.eof {
		b.rc.SetReadDeadline(time.Time{})
	}
}

// Upload buffers start small and grow only as the body keeps filling them,
// so a slow or stalled upload costs little memory while a fast one reaches
// putBuffer, where a WriteAt per buffer costs nothing next to the network.
const firstPutBuffer = 32 << 10
