// Package davclient is a store.Store over https:// (WebDAV) servers: sitebox
// itself, XrdHttp, dCache, EOS. Reads are HTTP range requests, listings
// PROPFIND, writes a streamed PUT, checksums RFC 3230 Want-Digest.
package davclient

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/cksum"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/webdav/davstatus"
)

// Options configure the client: the credentials, trust, redirect, dial
// and wait settings every client shares (outbound.Options), and the CA
// file.
type Options struct {
	outbound.Options
	// CAFile adds a PEM CA (e.g. a box's self-signed cert) to the system
	// pool, or to GridRoots when set.
	CAFile string
	// Insecure skips certificate verification (tests, first contact).
	Insecure bool
	// IOTimeout, when set, bounds the wait for each answer's headers and
	// each range read, so a server that stops answering fails the
	// request instead of hanging it; zero waits as long as the server
	// keeps the connection.
	IOTimeout time.Duration
}

// FS talks to one server; base is "https://host:port". Safe for
// concurrent use.
type FS struct {
	base       *url.URL
	client     *http.Client
	token      func() string
	redirectTo func(hostport string) error // nil: follow all (see Options)
	asked      sync.Map                    // hosts (host:port) that asked for the token
	kerberos   func() (*outbound.Kerberos, error)
	negotiate  sync.Map           // hosts (host:port) that asked for Kerberos (negotiate.go)
	maxWait    time.Duration      // Options.MaxWait
	ioTimeout  time.Duration      // Options.IOTimeout
	reconnect  bool               // Options.Reconnect
	down       outbound.Unreached // servers waited for in vain (reconnect.go)
	// noMultiRange is set once the server answers a multi-range request
	// with anything but the ranges (see file.ReadV).
	noMultiRange atomic.Bool
}

var (
	_ store.Store     = (*FS)(nil)
	_ store.Namespace = (*FS)(nil)
)

// New returns a client for the server at base.
func New(base string, opts Options) (*FS, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("davclient: %q is not an http(s)://host:port URL", base)
	}
	tc, err := tlsutil.ClientConfigRoots(opts.CAFile, opts.Insecure, opts.GridRoots)
	if err != nil {
		return nil, fmt.Errorf("davclient: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.MaxIdleConnsPerHost = 16
	if opts.DialContext != nil {
		tr.DialContext, tr.Proxy = opts.DialContext, nil
	}
	// Uploads ask for 100 Continue, so a director's 307 arrives before any
	// of the body is sent and the upload can go to the next hop. Servers
	// that ignore Expect get the body after this long.
	tr.ExpectContinueTimeout = 3 * time.Second
	if t := opts.IOTimeout; t > 0 {
		// A server that takes connections but does not answer (stopped,
		// overloaded) fails each try within t, however it hangs.
		tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout = t, min(tr.TLSHandshakeTimeout, t)
		if opts.DialContext == nil {
			tr.DialContext = (&net.Dialer{Timeout: t, KeepAlive: 30 * time.Second}).DialContext
		}
	}
	// Redirects are followed by send (redirect.go), not by http.Client.
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var rt http.RoundTripper = tr
	if opts.Proxy != nil {
		rt = &proxyTransport{base: tr, proxy: opts.Proxy}
	}
	return &FS{
		base:       &url.URL{Scheme: u.Scheme, Host: u.Host},
		client:     &http.Client{Transport: rt, Timeout: 0, CheckRedirect: noFollow},
		token:      opts.CurrentToken,
		kerberos:   opts.Kerberos,
		redirectTo: opts.RedirectTo,
		maxWait:    opts.Wait(),
		ioTimeout:  opts.IOTimeout,
		reconnect:  opts.Reconnect,
	}, nil
}

func (f *FS) url(name string) string {
	u := *f.base
	u.Path = name
	return u.String()
}

// do sends a request for name to this server and turns error statuses
// into store errors.
func (f *FS) do(ctx context.Context, method, name string, body io.Reader, hdr map[string]string, ok ...int) (*http.Response, error) {
	return f.doAt(ctx, method, name, f.url(name), body, hdr, ok...)
}

// doAt is do with the URL given: where a redirect already led (file reads
// go straight to the server that answered Open).
func (f *FS) doAt(ctx context.Context, method, name, target string, body io.Reader, hdr map[string]string, ok ...int) (*http.Response, error) {
	op := strings.ToLower(method)
	resp, err := f.send(ctx, method, target, body, hdr)
	if err != nil {
		if !errors.Is(err, store.ErrIO) && !errors.Is(err, store.ErrUnavailable) && !errors.Is(err, store.ErrPermission) {
			err = fmt.Errorf("%w: %w", store.ErrIO, err)
		}
		return nil, &store.PathError{Op: op, Path: name, Err: err}
	}
	for _, c := range ok {
		if resp.StatusCode == c {
			return resp, nil
		}
	}
	msg := peek(resp)
	if resp.StatusCode == http.StatusUnauthorized && f.kerberos == nil && offersNegotiate(resp.Header.Values("WWW-Authenticate")) {
		msg += " (the server also takes Kerberos: no credential cache found, run kinit)"
	}
	return nil, &store.PathError{Op: op, Path: name, Err: statusErr(resp.StatusCode, msg)}
}

func statusErr(code int, msg string) error {
	base := davstatus.StoreCodes.ErrOf(code)
	if base == nil {
		base = store.ErrIO
	}
	return fmt.Errorf("%w (HTTP %d: %s)", base, code, msg)
}

type multistatus struct {
	Responses []struct {
		Href string `xml:"href"`
		Prop struct {
			Length       string `xml:"getcontentlength"`
			LastModified string `xml:"getlastmodified"`
			Type         struct {
				Collection *struct{} `xml:"collection"`
			} `xml:"resourcetype"`
		} `xml:"propstat>prop"`
	} `xml:"response"`
}

// propfind lists name and, for depth 1, its entries; it also returns the
// URL that answered, which differs from ours after a redirect.
func (f *FS) propfind(ctx context.Context, name, depth string) ([]store.FileInfo, string, error) {
	resp, err := f.do(ctx, "PROPFIND", name, nil, map[string]string{"Depth": depth}, 207)
	if err != nil {
		return nil, "", err
	}
	at := resp.Request.URL.String()
	defer resp.Body.Close()
	var ms multistatus
	if err := xml.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&ms); err != nil {
		return nil, "", &store.PathError{Op: "propfind", Path: name, Err: fmt.Errorf("%w: bad multistatus: %v", store.ErrIO, err)}
	}
	var out []store.FileInfo
	for _, r := range ms.Responses {
		fi := store.FileInfo{Name: hrefName(r.Href), Mode: 0o644}
		fi.Size, _ = strconv.ParseInt(r.Prop.Length, 10, 64)
		fi.ModTime, _ = http.ParseTime(r.Prop.LastModified)
		if r.Prop.Type.Collection != nil {
			fi.Mode = fs.ModeDir | 0o755
		}
		out = append(out, fi)
	}
	return out, at, nil
}

// hrefName is the name an href of a listing stands for. The href is a
// URL (RFC 4918: absolute, or a path), decoded exactly once: a name
// holding "%41" arrives as "%2541" and stays "%41". One that does not
// parse as a URL (XrdHttp sends names unescaped: "100%" is not a URL) is
// taken as it is.
func hrefName(href string) string {
	p := href
	if u, err := url.Parse(href); err == nil && u.Path != "" {
		p = u.Path
	}
	return path.Base(strings.TrimRight(p, "/"))
}

// Stat uses PROPFIND with depth 0.
func (f *FS) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	fi, _, err := f.stat(ctx, name)
	return fi, err
}

// stat is Stat that also says which URL answered.
func (f *FS) stat(ctx context.Context, name string) (store.FileInfo, string, error) {
	l, at, err := f.propfind(ctx, name, "0")
	if err != nil {
		return store.FileInfo{}, "", err
	}
	if len(l) == 0 {
		return store.FileInfo{}, "", &store.PathError{Op: "stat", Path: name, Err: fmt.Errorf("%w: empty multistatus", store.ErrIO)}
	}
	return l[0], at, nil
}

// List uses PROPFIND with depth 1, leaving out the directory itself.
func (f *FS) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	l, _, err := f.propfind(ctx, name, "1")
	if err != nil || len(l) == 0 {
		return nil, err
	}
	return l[1:], nil
}

// Checksum asks with Want-Digest on a HEAD request.
func (f *FS) Checksum(ctx context.Context, name, algo string) (string, error) {
	algo, err := cksum.Normalize(algo)
	if err != nil {
		return "", err
	}
	resp, err := f.do(ctx, http.MethodHead, name, nil, map[string]string{"Want-Digest": algo}, 200)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	for _, d := range strings.Split(resp.Header.Get("Digest"), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(d), "=") // base64 may end in "="
		if strings.EqualFold(k, algo) {
			if sum, err := cksum.FromDigest(algo, v); err == nil {
				return sum, nil
			}
		}
	}
	return "", &store.PathError{Op: "checksum", Path: name, Err: fmt.Errorf("%w: server sent no %s digest", store.ErrUnsupported, algo)}
}

// Locate answers with the server itself.
func (f *FS) Locate(ctx context.Context, name string) ([]store.Location, error) {
	if _, err := f.Stat(ctx, name); err != nil {
		return nil, err
	}
	return []store.Location{{Endpoint: f.base.Host}}, nil
}

// Mkdir uses MKCOL, one level at a time when parents are asked for.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	if parents {
		if fi, err := f.Stat(ctx, name); err == nil && fi.IsDir() {
			return nil
		}
		if parent := path.Dir(name); parent != "/" && parent != "." {
			if err := f.Mkdir(ctx, parent, perm, true); err != nil {
				return err
			}
		}
	}
	resp, err := f.do(ctx, "MKCOL", name, nil, nil, 201)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Remove and Rmdir both use DELETE.
func (f *FS) Remove(ctx context.Context, name string) error {
	resp, err := f.do(ctx, http.MethodDelete, name, nil, nil, 200, 204)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Rmdir deletes an empty directory.
func (f *FS) Rmdir(ctx context.Context, name string) error { return f.Remove(ctx, name) }

// Rename uses MOVE.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	resp, err := f.do(ctx, "MOVE", from, nil, map[string]string{"Destination": f.url(to)}, 201, 204)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Chmod is not part of WebDAV.
func (f *FS) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	return &store.PathError{Op: "chmod", Path: name, Err: store.ErrUnsupported}
}

// tokenSource is the token of each request: TokenFunc, else the fixed
// Token.
// Close drops the client's idle connections; requests still work after
// it (they dial again).
func (f *FS) Close() error {
	f.client.CloseIdleConnections()
	return nil
}
