// Package remote reaches a server named by a URL, whatever its protocol:
// the one place that turns root://, roots://, xroot://, xroots://,
// http://, https:// and davs:// into a store.Store client. The cache's
// upstreams, `sitebox get/put/ls/stat`, job staging and the benches all
// dial through it, so they accept the same URLs and pass tokens, CAs and
// redirect checks the same way.
package remote

import (
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"sitebox/internal/davclient"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/x509grid"
	xrdclient "sitebox/internal/xrootd/client"
)

// xrootdSchemes speak the XRootD protocol; the ones ending in "s" over TLS.
var xrootdSchemes = []string{"root", "roots", "xroot", "xroots"}

// httpSchemes speak WebDAV over HTTP; davs is https by another name.
var httpSchemes = []string{"http", "https", "davs"}

// DefaultXRootDPort is the port of an XRootD URL that names none.
const DefaultXRootDPort = "1094"

// Schemes lists the URL schemes Dial accepts.
func Schemes() []string { return slices.Concat(xrootdSchemes, httpSchemes) }

// Supported reports whether Dial accepts URLs of scheme.
func Supported(scheme string) bool { return slices.Contains(Schemes(), scheme) }

// Encrypted reports whether URLs of scheme reach their server over TLS,
// the only way a token is sent to an XRootD server.
func Encrypted(scheme string) bool {
	switch scheme {
	case "roots", "xroots", "https", "davs":
		return true
	}
	return false
}

// IsURL reports whether s is a URL Dial accepts rather than a local path.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && Supported(scheme)
}

// SchemeList is the accepted schemes for messages: "root://, roots://, …".
func SchemeList() string {
	var b strings.Builder
	for i, s := range Schemes() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s + "://")
	}
	return b.String()
}

// Options say how to reach a server beyond its URL: the credentials,
// trust, redirect, dial and wait settings every client shares
// (outbound.Options, handed on whole), the CA file and the I/O timeout.
// The zero value reads anonymously, verifies certificates against the
// system roots and follows every redirect.
type Options struct {
	outbound.Options
	CAFile   string // extra CA (PEM) for https://, davs:// and roots:// servers
	Insecure bool   // skip certificate checks (tests, first contact)
	// IOTimeout bounds the wait for each answer: every XRootD request
	// but a checksum query (zero: the client's default, two minutes),
	// and each https answer's headers and range read (zero: none).
	IOTimeout time.Duration
	// PageChecks has XRootD clients read with kXR_pgread, each page
	// checked against its CRC32C (see xrdclient.Options.PageChecks);
	// http:// and https:// clients ignore it.
	PageChecks bool
}

// Client is a store reached over the network; Close releases its
// connections.
type Client interface {
	store.Store
	io.Closer
}

// URL is a parsed server URL.
type URL struct {
	Raw    string // as given
	Scheme string
	Host   string // host:port; XRootD URLs without a port get 1094
	Path   string // the clean path after the host ("/" if none); CGI is dropped
}

// XRootD reports whether the URL speaks the XRootD protocol.
func (u *URL) XRootD() bool { return slices.Contains(xrootdSchemes, u.Scheme) }

// Parse checks that raw is a URL of a supported scheme naming a host. For
// XRootD the path follows the host (root://host:port//store/f); CGI after
// "?" never becomes part of the path.
func Parse(raw string) (*URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if !Supported(u.Scheme) {
		return nil, fmt.Errorf("%q: unsupported scheme %q (use %s)", raw, u.Scheme, SchemeList())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q: no host", raw)
	}
	p, err := store.CleanPath("/" + strings.TrimLeft(u.Path, "/"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	out := &URL{Raw: raw, Scheme: u.Scheme, Host: u.Host, Path: p}
	if out.XRootD() && u.Port() == "" {
		out.Host = net.JoinHostPort(u.Hostname(), DefaultXRootDPort)
	}
	return out, nil
}

// Dial returns a client for the server raw names. Nothing is sent until
// the first call; XRootD clients connect then, and again after a failure.
func Dial(raw string, opts Options) (Client, error) {
	u, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return u.Dial(opts)
}

// Dial returns a client for the server u names.
func (u *URL) Dial(opts Options) (Client, error) {
	if u.XRootD() {
		co := xrdclient.Options{Options: opts.Options, IOTimeout: opts.IOTimeout, PageChecks: opts.PageChecks}
		if Encrypted(u.Scheme) {
			tc, err := tlsutil.ClientConfigRoots(opts.CAFile, opts.Insecure, opts.GridRoots)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", u.Raw, err)
			}
			co.TLS = tc
		} else {
			// The token goes only over TLS (ztn), never in clear.
			co.Token, co.TokenFunc = "", nil
		}
		return xrdclient.NewFSOptions(u.Host, co), nil
	}
	scheme := u.Scheme
	if scheme == "davs" {
		scheme = "https"
	}
	// Redirects (a director's 307) and waits (503 + Retry-After) are
	// followed inside davclient.
	return davclient.New(scheme+"://"+u.Host, davclient.Options{Options: opts.Options, CAFile: opts.CAFile, Insecure: opts.Insecure, IOTimeout: opts.IOTimeout})
}

// GridRoots are the system roots plus the CA certificates of a grid CA
// directory (X509_CERT_DIR's layout), for Options.GridRoots.
func GridRoots(certDir string) (*x509.CertPool, error) {
	sys, _ := x509.SystemCertPool()
	return x509grid.CertPool(certDir, sys)
}
