package client

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// MaxRedirects is how many kXR_redirect answers one operation follows
// (XrdCl's default RedirectLimit); the next one fails with
// ErrRedirectLimit instead of going round a loop between directors.
const MaxRedirects = 16

// ErrRedirectLimit is wrapped by the error of an operation redirected more
// than MaxRedirects times.
var ErrRedirectLimit = fmt.Errorf("redirect limit of %d reached", MaxRedirects)

// pathReq is a request that names a path. Its payload is rebuilt for each
// server a redirect sends it to, with the redirect's CGI merged into the
// path's.
type pathReq struct {
	id   uint16
	body [16]byte
	lead string // payload before the path: a mv's source path and a space
	path string // cleaned; also what errors name (the CGI may hold tokens)
	cgi  string // without '?'
	tail []byte // payload after the path and its CGI: a fattr's NUL and vectors
}

// newPathReq splits name into its path, which is cleaned like every
// store path, and its CGI ("/f?vo=cms"), which is sent as given.
func newPathReq(op string, id uint16, body [16]byte, name string) (*pathReq, error) {
	p, cgi := store.SplitOpaque(name)
	clean, err := store.CleanPath(p)
	if err != nil {
		var pe *store.PathError
		if errors.As(err, &pe) {
			return nil, &store.PathError{Op: op, Path: pe.Path, Err: pe.Err}
		}
		return nil, &store.PathError{Op: op, Path: p, Err: err}
	}
	return &pathReq{id: id, body: body, path: clean, cgi: cgi}, nil
}

// payload is the request data with cgi as the path's CGI.
func (r *pathReq) payload(cgi string) []byte {
	b := make([]byte, 0, len(r.lead)+len(r.path)+1+len(cgi))
	b = append(b, r.lead...)
	b = append(b, r.path...)
	if cgi != "" {
		b = append(b, '?')
		b = append(b, cgi...)
	}
	return append(b, r.tail...)
}

// do sends r to the FS's server and follows its redirects: each to the
// named server's pooled connection, with the redirect's CGI merged into
// the path's. kXR_wait answers are honoured within one budget for the
// whole operation (Options.MaxWait). A server a director sent the request to that
// cannot be reached, or answers with an error another server may not
// have, sends the request back to that director with tried= naming it,
// as XrdCl does with its load balancer; every such return counts as a
// redirect. With Options.Reconnect, a server that cannot be reached, or
// drops the connection before it answers, when no other can serve the
// request (the FS's own, the director itself, or the one server a
// director knows), is tried again within the same budget (waitFor): a
// restart or a failover is ridden out, a dead server fails the request
// with store.ErrUnavailable. It returns the connection that answered,
// which owns any file handle in the answer.
func (f *FS) do(ctx context.Context, r *pathReq) ([]byte, *Conn, error) {
	return f.doWait(ctx, &waiter{max: f.opts.Wait()}, r)
}

// doWait is do within the budget w, which the caller may have spent part
// of already (a read that lost its connection opening its file again).
func (f *FS) doWait(ctx context.Context, w *waiter, r *pathReq) ([]byte, *Conn, error) {
	// A proxy's own request upstream (store.WithUpstream) rides with the
	// caller's CGI: "sbx.via=cache&vo=cms" from a sitebox cache.
	addr, cgi := f.addr, mergeCGI(r.cgi, store.UpstreamCGI(ctx))
	director := "" // the server that last redirected this request
	var tried []string
	var failed error // the last failure at a server in tried
	var failedUnsent bool
	var failedAt time.Time
	for redirects := 0; ; {
		began := time.Now()
		resp, c, unsent, err := f.try(ctx, w, addr, r, cgi)
		var rd *Redirect
		paused := false // waited for a server: a retry, not a redirect
		switch {
		case errors.As(err, &rd):
			if failed != nil && slices.Contains(tried, rd.Addr()) {
				// The director knows no other server: wait for that one
				// to come back, or give up.
				if err := f.waitFor(ctx, w, rd.Addr(), r, failed, failedUnsent, failedAt); err != nil {
					return nil, nil, err
				}
				paused = true
			}
			director = addr
		case err == nil || ctx.Err() != nil:
			return resp, c, err
		case director == "" || addr == director:
			if err := f.waitFor(ctx, w, addr, r, err, unsent, began); err != nil {
				return resp, c, err
			}
			continue // the same server again
		default:
			rc, retry := triedCode(err)
			if !retry {
				return nil, nil, err
			}
			failed, failedUnsent, failedAt = err, unsent, began
			if !slices.Contains(tried, addr) {
				tried = append(tried, addr)
			}
			back := "tried=" + strings.Join(tried, ",")
			if rc != "" {
				back += "&triedrc=" + rc
			}
			rd = &Redirect{Opaque: back}
		}
		if !paused {
			if redirects == MaxRedirects {
				if rd.Host == "" {
					return nil, nil, fmt.Errorf("xrootd: %s: %w after %s failed: %w", proto.RequestName(r.id), ErrRedirectLimit, addr, err)
				}
				return nil, nil, fmt.Errorf("xrootd: %s: %w: loop between directors? (the last, %s, sent it on to %s)",
					proto.RequestName(r.id), ErrRedirectLimit, addr, rd.Addr())
			}
			redirects++
		}
		if rd.Host == "" {
			addr = director // back to the director, telling it where we failed
		} else {
			if err := f.mayFollow(rd.Addr()); err != nil {
				return nil, nil, fmt.Errorf("xrootd: %s: %w: %w", proto.RequestName(r.id), store.ErrPermission, err)
			}
			addr = rd.Addr()
		}
		cgi = mergeCGI(cgi, rd.Opaque)
	}
}

// waitFor decides on r, which failed with err at addr (at a try that
// began then, unsent if it never left) when no other server can serve
// it: with Options.Reconnect, a nil answer after a pause says send it to
// addr again; an error (err, or store.ErrUnavailable once the budget is
// spent) ends the operation. A server waited for in vain is noted, so
// later operations try it once and fail at once until it is reached
// again.
func (f *FS) waitFor(ctx context.Context, w *waiter, addr string, r *pathReq, err error, unsent bool, began time.Time) error {
	if !f.opts.Reconnect || !retriable(r, err, unsent) {
		return err
	}
	if since, down := f.down.Since(addr); down {
		return fmt.Errorf("xrootd: %s: %w: %s unreachable since %s: %w", proto.RequestName(r.id), store.ErrUnavailable, addr, since.Format(time.TimeOnly), err)
	}
	if werr := w.reconnect(ctx, addr, r.id, err, began); werr != nil {
		if errors.Is(werr, store.ErrUnavailable) {
			f.down.Mark(addr, began)
		}
		return werr
	}
	return nil
}

// mayFollow asks Options.RedirectTo whether a redirect to addr may be
// followed; the server the FS was made for is always fine.
func (f *FS) mayFollow(addr string) error {
	if f.opts.RedirectTo == nil || strings.EqualFold(addr, f.addr) {
		return nil
	}
	return f.opts.RedirectTo(addr)
}

// try sends r once to the server at addr; unsent says it never left
// (no connection could be made).
func (f *FS) try(ctx context.Context, w *waiter, addr string, r *pathReq, cgi string) (resp []byte, c *Conn, unsent bool, err error) {
	c, err = f.conn(ctx, addr)
	if err != nil {
		return nil, nil, true, err
	}
	resp, err = c.do(ctx, w, r.id, r.body, r.payload(cgi), nil, nil)
	var xe *Error
	if c.anonNote != "" && errors.As(err, &xe) && xe.Code == proto.ErrNotAuthorized {
		err = fmt.Errorf("%w (read anonymously: %s)", err, c.anonNote)
	}
	return resp, c, false, err
}

// retriable says whether r, which failed with err, may be sent to the
// same server again once it can be reached. A request that never left
// may, when what failed was reaching the server (refused, reset, timed
// out, closed during login), not the server's answer (a refused login, a
// certificate that does not verify). One the server may have carried
// out before the connection dropped is sent again unless doing it twice
// does harm: an open that creates or truncates (XrdCl's rule; its
// IsRetriable).
func retriable(r *pathReq, err error, unsent bool) bool {
	if !unsent {
		if !errors.Is(err, ErrClosed) {
			return false
		}
		if r.id == proto.ReqOpen {
			return binary.BigEndian.Uint16(r.body[2:4])&(proto.OpenDelete|proto.OpenNew) == 0
		}
		return true
	}
	var xe *Error
	var cv *tls.CertificateVerificationError
	if errors.As(err, &xe) || errors.As(err, &cv) || errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.Is(err, ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

// triedCode says whether a failure at a server a director chose is worth
// asking that director again, and the triedrc= reason XRootD's directors
// understand. A server that cannot be reached is; so are the errors
// another replica may not share (XrdCl's list for a load balancer).
func triedCode(err error) (rc string, retry bool) {
	var xe *Error
	if !errors.As(err, &xe) {
		return "", true // no answer: down, unreachable or cut
	}
	switch xe.Code {
	case proto.ErrNotFound:
		return "enoent", true
	case proto.ErrIOError:
		return "ioerr", true
	case proto.ErrFSError:
		return "fserr", true
	case proto.ErrServerError:
		return "srverr", true
	case proto.ErrOverloaded, proto.ErrNoMemory:
		return "", true
	}
	return "", false
}

// mergeCGI adds the pairs of add to cur, a value in add replacing cur's
// for the same key: what XrdCl does with a redirect's CGI (MergeCGI with
// replace). Pairs are kept as sent, not re-encoded: XRootD clients and
// servers do not always send valid URL encoding.
func mergeCGI(cur, add string) string {
	add = strings.Trim(add, "&")
	if add == "" {
		return cur
	}
	cur = strings.Trim(cur, "&")
	if cur == "" {
		return add
	}
	replaced := map[string]bool{}
	for kv := range strings.SplitSeq(add, "&") {
		k, _, _ := strings.Cut(kv, "=")
		replaced[k] = true
	}
	var b strings.Builder
	for kv := range strings.SplitSeq(cur, "&") {
		if k, _, _ := strings.Cut(kv, "="); kv == "" || replaced[k] {
			continue
		}
		b.WriteString(kv)
		b.WriteByte('&')
	}
	b.WriteString(add)
	return b.String()
}
