package davclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
)

// A server that restarts refuses connections for a moment, and one that
// is gone refuses them for good; with Options.Reconnect, a read asked
// meanwhile waits for the server within the client's wait budget
// (Options.MaxWait, shared with 503 + Retry-After) and then fails with
// store.ErrUnavailable, on the schedule and with the record of
// unreached servers every client keeps (outbound.Outage, Unreached).

// retry decides on a request that failed with err at a try that began
// then: nil after a pause says send it again. Only requests without a
// body that change nothing are (reads, listings): the server may have
// done the others before the connection broke, and a streamed body
// cannot be sent twice. waited is what 503 waits took of the budget.
func (f *FS) retry(ctx context.Context, o *outbound.Outage, method, target string, hasBody bool, err error, began time.Time, waited time.Duration) error {
	if !f.reconnect || hasBody || !idempotent(method) || ctx.Err() != nil || !unreachable(err) {
		return err
	}
	host := target
	if u, perr := url.Parse(target); perr == nil {
		host = hostPort(u)
	}
	if since, ok := f.down.Since(host); ok {
		return fmt.Errorf("%w: %s %s: unreachable since %s: %w", store.ErrUnavailable, method, redactString(target), since.Format(time.TimeOnly), err)
	}
	o.Begin(began)
	spent := waited + o.Lasted()
	if spent >= f.maxWait {
		f.down.Mark(host, o.Since())
		return fmt.Errorf("%w: %s %s: unreachable for %v: %w", store.ErrUnavailable, method, redactString(target), o.Lasted().Round(time.Millisecond), err)
	}
	return o.Pause(ctx, f.maxWait-spent)
}

// idempotent methods change nothing on the server: sending one twice is
// harmless.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND":
		return true
	}
	return false
}

// unreachable reports whether err is a failure to reach the server or
// to get its answer (refused, reset, closed, timed out), not a refusal
// of the server's certificate nor the caller giving up.
func unreachable(err error) bool {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) || errors.Is(err, context.Canceled) {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // a url.Error is a net.Error whatever it wraps
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		// net/http's answer to a connection closed before any byte of
		// the response: an unexported error, known by its text only.
		strings.Contains(err.Error(), "server closed idle connection")
}
