package webdav

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/store"
)

// logged wraps a GET or PUT so its line goes to the access log when it
// ends: the status it got and the body bytes moved (sent for GET,
// received for PUT).
func (h *Handler) logged(w http.ResponseWriter, r *http.Request, name string) (http.ResponseWriter, *http.Request, func()) {
	sink := h.cfg.AccessLog
	if sink == nil || (r.Method != http.MethodGet && r.Method != http.MethodPut) {
		return w, r, func() {}
	}
	start := time.Now()
	aw := &accessWriter{ResponseWriter: w}
	var body *accessBody
	if r.Method == http.MethodPut && r.Body != nil {
		body = &accessBody{ReadCloser: r.Body}
		r.Body = body
	}
	return aw, r, func() {
		e := accesslog.Entry{Time: time.Now(), Proto: "https", Op: r.Method, Path: name, Bytes: aw.n,
			Duration: time.Since(start), Result: statusResult(aw.status)}
		if body != nil {
			e.Bytes = body.n
		}
		e.FromRequest(store.RequestFrom(r.Context()))
		sink.Transfer(e)
	}
}

func statusResult(code int) string {
	if code == 0 {
		code = http.StatusOK
	}
	if code/100 == 2 {
		return "ok"
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}

// accessWriter records a response's status and body bytes. It keeps
// io.ReaderFrom (sendfile for plain HTTP) and unwraps for
// http.ResponseController.
type accessWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (a *accessWriter) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *accessWriter) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	n, err := a.ResponseWriter.Write(p)
	a.n += int64(n)
	return n, err
}

func (a *accessWriter) ReadFrom(src io.Reader) (int64, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := a.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(struct{ io.Writer }{a.ResponseWriter}, src)
	}
	a.n += n
	return n, err
}

func (a *accessWriter) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (a *accessWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// accessBody counts the bytes read from a request body.
type accessBody struct {
	io.ReadCloser
	n int64
}

func (c *accessBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}
