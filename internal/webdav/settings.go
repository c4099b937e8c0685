package webdav

import (
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/units"
)

// Settings configures the https:// (WebDAV) frontend: [https] in the
// config file decodes straight into it, and the handler takes it as it
// is, embedded in its Config.
type Settings struct {
	// Addr is the listen address (default ":8443"); "off" disables it.
	Addr string `toml:"addr"`
	// Cert and Key are PEM files. When both are empty a self-signed
	// certificate is generated on first start and kept in StateDir.
	Cert string `toml:"cert"`
	Key  string `toml:"key"`
	// PlainHTTP serves http:// without TLS; only for tests and for boxes
	// behind a TLS-terminating proxy.
	PlainHTTP bool `toml:"plain_http"`
	// HTTP2 offers HTTP/2 to clients that want it (curl does by default).
	// Off by default: bulk reads over Go's HTTP/2 cost about twice the CPU
	// of HTTP/1.1 on a small box (see sitebox bench auth), and the grid's
	// HTTP clients (davix, gfal, XRootD) speak HTTP/1.1.
	HTTP2 bool `toml:"http2"`
	// HeaderTimeout bounds the wait for a request's headers (default
	// "30s"); BodyTimeout how long an upload's body may go without a byte
	// before it is abandoned with 408, leaving nothing (default "1m").
	// Each at least 1s; 0 when unset, for the defaults (ReadHeaderTimeout,
	// bodyTimeout); the tag nonzero has the config's type check refuse a
	// "0s" in the file, no timeout to keep.
	HeaderTimeout units.Duration `toml:"header_timeout" nonzero:"duration of at least 1s"`
	BodyTimeout   units.Duration `toml:"body_timeout" nonzero:"duration of at least 1s"`
	// MaxConnsPerClient bounds the connections one address may hold open
	// (default 512; -1: no limit), MaxConnsPerNetwork those of one network,
	// an IPv4 /24 or IPv6 /64 (default 1024, and no less than
	// MaxConnsPerClient; no limit when that has none). More are closed at
	// once, unless a connection counted under the limit is idle between
	// requests: the one idle longest is closed instead.
	MaxConnsPerClient  int `toml:"max_conns_per_client"`
	MaxConnsPerNetwork int `toml:"max_conns_per_network"`
}

// Defaults fills unset fields with their documented defaults; the
// timeouts and limits keep 0 for the frontend's own defaults.
func (h *Settings) Defaults() {
	if h.Addr == "" {
		h.Addr = ":8443"
	}
}

// Validate returns every problem in h, keyed as in the file
// ("https.header_timeout"). It looks at the disk only to check that the
// certificate and key can be read.
func (h *Settings) Validate() []problem.Problem {
	ps := problem.List{Section: "https"}
	if msg := problem.CheckAddr(h.Addr); msg != "" {
		ps.Add("addr", "%s", msg)
	}
	if (h.Cert == "") != (h.Key == "") {
		ps.Add("cert", "cert and key must be given together (or neither, for a generated self-signed certificate)")
	}
	for _, f := range []struct{ key, path string }{{"cert", h.Cert}, {"key", h.Key}} {
		if f.path == "" {
			continue
		}
		if msg := problem.Readable(f.path); msg != "" {
			ps.Add(f.key, "%s", msg)
		}
	}
	for _, l := range []struct {
		key string
		v   int
	}{{"max_conns_per_client", h.MaxConnsPerClient}, {"max_conns_per_network", h.MaxConnsPerNetwork}} {
		if msg := problem.CheckLimit(l.v); msg != "" {
			ps.Add(l.key, "%s", msg)
		}
	}
	for _, d := range []struct {
		key string
		v   units.Duration
	}{{"header_timeout", h.HeaderTimeout}, {"body_timeout", h.BodyTimeout}} {
		if d.v == 0 {
			continue // unset
		}
		if msg := problem.CheckAtLeast(d.v.D(), time.Second); msg != "" {
			ps.Add(d.key, "%s", msg)
		}
	}
	return ps.All
}

// The timeouts' defaults, taken where a setting is unset (0).
const (
	defaultHeaderTimeout = 30 * time.Second
	defaultBodyTimeout   = time.Minute
)

// ReadHeaderTimeout is header_timeout with its default (30s).
func (h *Settings) ReadHeaderTimeout() time.Duration {
	if h.HeaderTimeout > 0 {
		return h.HeaderTimeout.D()
	}
	return defaultHeaderTimeout
}

// bodyTimeout is body_timeout with its default (1m).
func (h *Settings) bodyTimeout() time.Duration {
	if h.BodyTimeout > 0 {
		return h.BodyTimeout.D()
	}
	return defaultBodyTimeout
}

// ConnsPerNetwork is max_conns_per_network with its default, for
// NewConnLimiter: 0 means no limit.
func (h *Settings) ConnsPerNetwork() int {
	perClient := h.ConnsPerClient()
	switch n := h.MaxConnsPerNetwork; {
	case n == 0 && perClient == 0:
		return 0
	case n == 0:
		return max(1024, perClient)
	case n < 0:
		return 0
	default:
		return n
	}
}

// ConnsPerClient is max_conns_per_client with its default (512, as
// root://'s sessions per client), for NewConnLimiter: 0 means no limit.
func (h *Settings) ConnsPerClient() int {
	switch n := h.MaxConnsPerClient; {
	case n == 0:
		return 512
	case n < 0:
		return 0
	default:
		return n
	}
}
