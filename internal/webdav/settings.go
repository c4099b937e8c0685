package webdav

import "time"

// Settings configures the https:// (WebDAV) frontend: [https] in the
// config file.
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
	HeaderTimeout string `toml:"header_timeout"`
	BodyTimeout   string `toml:"body_timeout"`
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

// Config is the handler's Config for these settings (the box adds the
// rest). Durations have been validated; one unset is 0, the default.
func (h *Settings) Config() Config {
	d, _ := time.ParseDuration(h.BodyTimeout)
	return Config{BodyTimeout: d}
}

// ReadHeaderTimeout is header_timeout with its default (30s).
func (h *Settings) ReadHeaderTimeout() time.Duration {
	if d, err := time.ParseDuration(h.HeaderTimeout); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
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
