package davclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
)

// MaxHops bounds the redirects one request follows: directors stop their
// own loops at 16 hops (sbx.hops), and so does the client, whatever the
// servers do.
const MaxHops = 16

// send makes one request, following redirects and waits by itself rather
// than through http.Client: Go turns a 302 to PROPFIND into a GET, cannot
// resend a streamed PUT body, and knows nothing of Retry-After. A client
// made for https:// follows no redirect to plain http://. A read that
// cannot reach its server is sent again within the wait budget (retry). Headers
// (Range, Depth, Want-Digest, If-None-Match) go to every hop; the bearer
// token only to hops that keep it private and need it (tokenFor); a
// redirect the client's RedirectTo refuses is never followed. The
// response's Request.URL is the URL that answered.
func (f *FS) send(ctx context.Context, method, target string, body io.Reader, hdr map[string]string) (*http.Response, error) {
	var rb *replayBody
	if body != nil {
		rb = &replayBody{r: body, mu: &sync.Mutex{}}
	}
	var waited time.Duration
	var out outbound.Outage
	hops := 0
	tried := map[string]bool{} // hosts sent Kerberos in this request
	for {
		req, withheld, err := f.newRequest(ctx, method, target, rb, hdr, tried)
		if err != nil {
			return nil, err
		}
		began := time.Now()
		resp, err := f.client.Do(req)
		if err != nil {
			if err := f.retry(ctx, &out, method, target, rb != nil, err, began, waited); err != nil {
				return nil, err
			}
			continue // the same server again, once it can be reached
		}
		if f.reconnect {
			f.down.Answered(hostPort(req.URL)) // it answers
		}
		switch {
		case isRedirect(method, resp.StatusCode):
			if resp.Header.Get("Location") == "" {
				return resp, nil // a 3xx without a target is the caller's error status
			}
			hops++
			if target, err = f.redirected(req, resp, method, target, hops); err != nil {
				return nil, err
			}
		case f.wantsNegotiate(req, resp, tried):
			// The host wants Kerberos: it gets it from now on,
			// starting with this request again.
			drain(resp)
			f.negotiate.Store(hostPort(req.URL), true)
			tried[hostPort(req.URL)] = true
		case withheld && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
			// The host a redirect led to wants the token: from now on it
			// gets it, starting with this request again.
			drain(resp)
			f.asked.Store(hostPort(req.URL), true)
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
			if err := f.deferred(ctx, resp, method, target, &waited); err != nil {
				return nil, err
			}
		default:
			return resp, nil
		}
		if rb != nil && !rb.retire() {
			return nil, fmt.Errorf("%w: %s %s: the server redirected or deferred the upload after part of it was sent; it cannot be resent", store.ErrIO, method, redactString(target))
		}
		rb = rb.again()
	}
}

// redirected is where a redirect (hop number hops) leads: a Location
// that is a URL, over TLS when the request was, to a host the options
// allow, within MaxHops.
func (f *FS) redirected(req *http.Request, resp *http.Response, method, target string, hops int) (string, error) {
	loc := resp.Header.Get("Location")
	next, err := req.URL.Parse(loc)
	drain(resp)
	if err != nil || (next.Scheme != "https" && next.Scheme != "http") || next.Host == "" {
		return "", fmt.Errorf("%s %s: redirected to a bad Location %q", method, target, loc)
	}
	if f.base.Scheme == "https" && next.Scheme != "https" {
		// What was asked over TLS stays over TLS: data and headers
		// would otherwise travel in clear behind the caller's back.
		return "", fmt.Errorf("%w: %s %s: redirected from https:// to plain %s; refused", store.ErrPermission, method, redactString(target), redact(next))
	}
	if err := f.mayFollow(next); err != nil {
		return "", fmt.Errorf("%w: %s: %w", store.ErrPermission, method, err)
	}
	if hops > MaxHops {
		return "", fmt.Errorf("%w: %s: more than %d redirects, the last to %s", store.ErrIO, method, MaxHops, redact(next))
	}
	return next.String(), nil
}

// deferred waits as a 503 with Retry-After asks, within the wait budget
// (Options.MaxWait, counted in waited over the request's tries).
func (f *FS) deferred(ctx context.Context, resp *http.Response, method, target string, waited *time.Duration) error {
	d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	msg := peek(resp)
	if !ok {
		return fmt.Errorf("%w: %s %s: HTTP 503 with a bad Retry-After %q: %s", store.ErrUnavailable, method, redactString(target), resp.Header.Get("Retry-After"), msg)
	}
	if *waited+d > f.maxWait {
		return fmt.Errorf("%w: %s %s asks to wait %v more (%q) after %v of waiting; giving up at %v",
			store.ErrUnavailable, method, redactString(target), d, msg, *waited, f.maxWait)
	}
	*waited += d
	return outbound.Sleep(ctx, d)
}

// newRequest builds one hop's request; withheld reports that a token was
// kept back from a host that has not asked for it yet. tried holds the
// hosts that challenged this request for Kerberos (see negotiateHeader).
func (f *FS) newRequest(ctx context.Context, method, target string, body *replayBody, hdr map[string]string, tried map[string]bool) (*http.Request, bool, error) {
	var r io.Reader
	if body != nil {
		r = body
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err != nil {
		return nil, false, err
	}
	for k, v := range hdr {
		if k == "Content-Length" {
			// net/http sends the request's ContentLength, never the
			// header: a body of known size goes unchunked, and one that
			// ends short fails instead of looking complete.
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && body != nil {
				req.ContentLength = n
			}
			continue
		}
		req.Header.Set(k, v)
	}
	tok, withheld := f.tokenFor(req.URL)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if h, ok, err := f.negotiateHeader(req.URL, tried[hostPort(req.URL)]); err != nil {
		return nil, false, err
	} else if ok {
		req.Header.Set("Authorization", h)
	}
	return req, withheld, nil
}

// mayFollow asks RedirectTo whether a redirect to u may be followed; the
// server the client was made for is always fine.
func (f *FS) mayFollow(u *url.URL) error {
	if f.redirectTo == nil || hostPort(u) == hostPort(f.base) {
		return nil
	}
	return f.redirectTo(hostPort(u))
}

// tokenFor is the bearer token to send to u, and whether one was held
// back for now. The server the client was made for gets it. Another host
// never gets it in clear text (plain http://); over https it gets it when
// RedirectTo vouched for it (a cache's trusted hosts), or, for a user's
// own client, once it asked for it: a federation's data servers need the
// token for protected files, and a WLCG token's audience says where it
// is good, but a server that does not need it should not see it.
func (f *FS) tokenFor(u *url.URL) (string, bool) {
	tok := f.token()
	switch {
	case tok == "":
		return "", false
	case hostPort(u) == hostPort(f.base):
		return tok, false
	case u.Scheme != "https":
		return "", false
	case f.redirectTo != nil:
		return tok, false // every host reached passed RedirectTo
	}
	if _, ok := f.asked.Load(hostPort(u)); ok {
		return tok, false
	}
	return "", true
}

// hostPort is u's host:port, lower case, with the scheme's default port
// when the URL has none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// isRedirect reports whether the client follows status for method. 301,
// 302, 307 and 308 keep the method (WebDAV clients resend PROPFIND, not
// GET); 303 means "GET that instead", which only fits GET and HEAD.
func isRedirect(method string, status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	case http.StatusSeeOther:
		return method == http.MethodGet || method == http.MethodHead
	}
	return false
}

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date.
// Waits under a second are taken as one, so a server answering 0 cannot
// make the client spin.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return max(time.Duration(min(secs, 1<<30))*time.Second, time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), time.Second), true
	}
	return 0, false
}

// drain reads a little of a response we are done with, so its connection
// can be reused, and closes it.
func drain(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}

// peek returns the start of a response's plain-text message and closes it.
func peek(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return strings.TrimSpace(string(b))
}

// redact drops the query (tokens, authz=) from a URL for error messages.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.User, c.Fragment = "", nil, ""
	return c.String()
}

func redactString(s string) string {
	if u, err := url.Parse(s); err == nil {
		return redact(u)
	}
	return "(bad URL)"
}

// replayBody lets an upload that a server redirected or deferred before
// reading any of it be sent again, to the next hop. The transport may
// still hold the old request's body (it reads only after 100 Continue or
// its timeout), so each hop gets its own view, and a retired view refuses
// to read: the bytes can go to one request only.
type replayBody struct {
	r       io.Reader
	mu      *sync.Mutex // shared by the views of one body
	started bool        // a read was let through
	retired bool
}

var errRetired = errors.New("davclient: upload body moved to the next hop")

func (b *replayBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.retired {
		b.mu.Unlock()
		return 0, errRetired
	}
	b.started = true
	b.mu.Unlock()
	return b.r.Read(p)
}

// Close is a no-op: the transport closes a body it will not send, but the
// next hop still needs the reader (its owner closes it).
func (b *replayBody) Close() error { return nil }

// retire stops this view and reports whether none of the body was read.
func (b *replayBody) retire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retired = true
	return !b.started
}

// again is a fresh view of the same reader for the next request.
func (b *replayBody) again() *replayBody {
	if b == nil {
		return nil
	}
	return &replayBody{r: b.r, mu: b.mu}
}
