package webdav

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"sitebox/internal/store"
	"sitebox/internal/tpc"
	"sitebox/internal/tpc/tpcallow"
	"sitebox/internal/webdav/davstatus"
)

// copyRetryAfter is the Retry-After (seconds) of a copy refused for want
// of buffer memory: about the time copies take to give some back.
const copyRetryAfter = 30

// httpError carries a status for failures that are not store errors (bad
// headers, refused methods). Its message goes to the client as is.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{http.StatusBadRequest, msg} }

// clientBodyError marks a failure reading the request body: the client's
// fault (disconnect, short or malformed chunked body), not the store's.
type clientBodyError struct{ err error }

func (e *clientBodyError) Error() string { return "reading request body: " + e.err.Error() }
func (e *clientBodyError) Unwrap() error { return e.err }

// statusOf is the one place errors become HTTP statuses: failures of the
// request itself here, store errors by davstatus's table. Callers that need
// a different status for a sentinel in their context (MKCOL answering 405
// for ErrExist) wrap the error in an httpError first.
func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	var mbe *http.MaxBytesError
	var se *stallError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &se):
		return http.StatusRequestTimeout
	case isClientBody(err):
		return http.StatusBadRequest
	case errors.Is(err, tpc.ErrBuffersFull):
		return http.StatusServiceUnavailable // a copy refused for want of memory: later it may run
	}
	code, ok := davstatus.StoreCodes.CodeOf(err)
	switch {
	case !ok:
		return http.StatusInternalServerError
	case code == http.StatusBadGateway && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)):
		return http.StatusGatewayTimeout
	}
	return code
}

func isClientBody(err error) bool {
	var cbe *clientBodyError
	return errors.As(err, &cbe)
}

// message is the plain-text body for err. Store errors name the namespace
// path and the problem (store.PathError never holds a disk path); errors we
// cannot classify may come from anywhere, so the client only learns that
// something failed and the details go to the server log.
func message(err error, code int) string {
	if code == http.StatusBadGateway || code == http.StatusGatewayTimeout {
		return "the upstream server of this path is unavailable"
	}
	if code == http.StatusInternalServerError {
		if errors.Is(err, store.ErrIO) {
			return "i/o error on the storage"
		}
		return "internal server error"
	}
	msg := strings.TrimSpace(err.Error())
	if errors.Is(err, io.ErrUnexpectedEOF) && isClientBody(err) {
		msg = "request body ended before Content-Length bytes arrived"
	}
	return msg
}

// fail answers err with its status and a one-line plain-text body, logging
// server-side failures loudly and refusals quietly. (A director's answer,
// a redirect or a wait, is not a failure: see route.)
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	for _, k := range []string{"Etag", "Digest", "Last-Modified", "Content-Range"} {
		w.Header().Del(k) // headers set for a success must not ride on an error
	}
	code := h.authStatus(w, r, err, statusOf(err))
	if errors.Is(err, tpcallow.ErrRefused) {
		h.log.Warn("third-party copy refused", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	} else if code >= 500 {
		h.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	} else {
		h.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	}
	if code == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", allowed)
	}
	if errors.Is(err, tpc.ErrBuffersFull) {
		w.Header().Set("Retry-After", strconv.Itoa(copyRetryAfter))
	}
	msg := message(err, code)
	// The policy names the note itself where it is the reason (auth's
	// checkVO): once is enough.
	if note, _ := r.Context().Value(credentialNoteKey{}).(string); note != "" && code == http.StatusForbidden && !strings.Contains(msg, note) {
		msg += " (" + note + ")"
	}
	http.Error(w, msg, code)
}
