// Package config is sitebox's single TOML configuration file: its types,
// defaults and validation. Validation names every problem with the line it
// is on, so an operator can fix a file in one pass.
package config

import (
	"time"

	"sitebox/internal/jobs"
)

// Config is the whole file. The zero value plus Defaults is a box that
// serves nothing; at least one role must be configured to serve.
type Config struct {
	Server    Server      `toml:"server"`
	Root      Root        `toml:"root"`
	HTTPS     HTTPS       `toml:"https"`
	Exports   []Export    `toml:"export"`
	Cache     Cache       `toml:"cache"`
	Director  Director    `toml:"director"`
	Advertise Advertise   `toml:"advertise"`
	Auth      Auth        `toml:"auth"`
	Jobs      jobs.Config `toml:"jobs"`
	Probe     Probe       `toml:"probe"`
}

// Server holds settings shared by every role.
type Server struct {
	// Name identifies the box in logs and to directors (default: hostname).
	Name string `toml:"name"`
	// Site is the site the box belongs to, e.g. "UNIGE".
	Site string `toml:"site"`
	// StateDir keeps generated certificates and other state
	// (default /var/lib/sitebox, or ./sitebox-state when not root).
	StateDir string `toml:"state_dir"`
	// LogFormat is "text" (default) or "json".
	LogFormat string `toml:"log_format"`
	// LogLevel is "debug", "info" (default), "warn" or "error".
	LogLevel string `toml:"log_level"`
	// MetricsAddr serves Prometheus metrics over plain HTTP at /metrics,
	// e.g. "127.0.0.1:9101"; "off" (default) serves them only on the admin
	// socket in StateDir.
	MetricsAddr string `toml:"metrics_addr"`
	// Dashboard serves the web dashboard at /.sitebox/dashboard/ on the
	// https port (default true). It shows no data, only transfer figures,
	// but its top users are token subjects: set false where those are
	// private.
	Dashboard *bool `toml:"dashboard"`
}

// DashboardEnabled reports whether the dashboard is served.
func (s *Server) DashboardEnabled() bool { return s.Dashboard == nil || *s.Dashboard }

// Root configures the root:// (XRootD protocol) frontend.
type Root struct {
	// Addr is the listen address (default ":1094"); "off" disables it.
	Addr string `toml:"addr"`
	// TLS serves roots:// (TLS switched on in-band, as XRootD does) with
	// the https certificate; default true. Tokens over root:// need it.
	TLS *bool `toml:"tls"`
	// Limits on what clients may hold, so a few connections cannot take
	// the descriptors everyone needs. 0 takes the default, -1 means no
	// limit. A client over a limit gets kXR_Overloaded (a session's own
	// file table: kXR_NoMemory, as XRootD) naming it, logged once per
	// client and minute.
	//
	// MaxSessions (default 4096) and MaxSessionsPerClient (default 512:
	// a batch farm behind NAT arrives from one address) bound connections;
	// MaxOpenFiles (default 32768), MaxOpenFilesPerClient (default 4096)
	// and MaxOpenFilesPerSession (default 1024) bound open files. The
	// defaults stay well inside the descriptors of the packaged unit
	// (LimitNOFILE) and of a common 65536 limit, with room for https; a
	// process allowed fewer descriptors gets smaller default totals.
	MaxSessions            int `toml:"max_sessions"`
	MaxSessionsPerClient   int `toml:"max_sessions_per_client"`
	MaxOpenFiles           int `toml:"max_open_files"`
	MaxOpenFilesPerClient  int `toml:"max_open_files_per_client"`
	MaxOpenFilesPerSession int `toml:"max_open_files_per_session"`
	// RequestTimeout is how long a started request (its header, a write's
	// data) may go without a byte before the client is disconnected
	// (default "1m").
	RequestTimeout string `toml:"request_timeout"`
	// WriteTimeout is how long a client may leave an answer unread before
	// it is disconnected, freeing the buffer it holds (default "1m").
	WriteTimeout string `toml:"write_timeout"`
}

// TLSEnabled reports whether roots:// is served.
func (r *Root) TLSEnabled() bool { return r.TLS == nil || *r.TLS }

// HTTPS configures the https:// (WebDAV) frontend.
type HTTPS struct {
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
	// (default 512; -1: no limit); more are closed at once.
	MaxConnsPerClient int `toml:"max_conns_per_client"`
}

// Export maps a namespace prefix onto storage pools (the origin role).
type Export struct {
	Prefix   string   `toml:"prefix"`
	Pools    []string `toml:"pools"`
	ReadOnly bool     `toml:"read_only"`
}

// Duration is a duration setting's value, 0 when unset (the component's
// default applies). Validate has checked it parses.
func Duration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// Off is the address value that disables a listener.
const Off = "off"

// ApplyDefaults fills unset fields with their documented defaults.
func (c *Config) ApplyDefaults(hostname string, isRoot bool) {
	if c.Server.Name == "" {
		c.Server.Name = hostname
	}
	if c.Server.StateDir == "" {
		c.Server.StateDir = "./sitebox-state"
		if isRoot {
			c.Server.StateDir = "/var/lib/sitebox"
		}
	}
	if c.Server.LogFormat == "" {
		c.Server.LogFormat = "text"
	}
	if c.Server.LogLevel == "" {
		c.Server.LogLevel = "info"
	}
	if c.Server.MetricsAddr == "" {
		c.Server.MetricsAddr = Off
	}
	if c.Root.Addr == "" {
		c.Root.Addr = ":1094"
	}
	if c.HTTPS.Addr == "" {
		c.HTTPS.Addr = ":8443"
	}
	c.Cache.applyDefaults()
	c.Director.applyDefaults()
	c.Advertise.applyDefaults()
	c.Auth.applyDefaults()
	c.Jobs.Defaults(c.Server.StateDir)
}
