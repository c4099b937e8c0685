package server

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// Settings configures the root:// (XRootD protocol) frontend: [root] in
// the config file, turned into a Config by Config.
type Settings struct {
	// Addr is the listen address (default ":1094"); "off" disables it.
	Addr string `toml:"addr"`
	// TLS serves roots:// (TLS switched on in-band, as XRootD does) with
	// the https certificate; default true. Tokens over root:// need it.
	TLS *bool `toml:"tls"`
	// Limits on what clients may hold, so a few connections cannot take
	// the descriptors everyone needs. 0 takes the default, -1 means no
	// limit. A client over a limit gets kXR_Overloaded (a session's own
	// file table: kXR_NoMemory, as XRootD) naming it, logged once per
	// client and minute. A client is an address; a network is an IPv4
	// /24 or IPv6 /64.
	//
	// MaxSessions (default 4096), MaxSessionsPerClient (default an eighth
	// of MaxSessions, at most 512: a batch farm behind NAT arrives from
	// one address) and MaxSessionsPerNetwork (a quarter, at most 1024,
	// and no less than MaxSessionsPerClient) bound connections;
	// MaxOpenFiles (default 32768), MaxOpenFilesPerClient (an eighth, at
	// most 4096), MaxOpenFilesPerNetwork (a quarter, at most 8192) and
	// MaxOpenFilesPerSession (default 1024) bound open files. The
	// defaults stay well inside the descriptors of the packaged unit
	// (LimitNOFILE) and of a common 65536 limit, with room for https; a
	// process allowed fewer descriptors gets smaller default totals.
	// Idle sessions are closed to let a new client in rather than have
	// it refused (see Limits).
	MaxSessions            int `toml:"max_sessions"`
	MaxSessionsPerClient   int `toml:"max_sessions_per_client"`
	MaxSessionsPerNetwork  int `toml:"max_sessions_per_network"`
	MaxOpenFiles           int `toml:"max_open_files"`
	MaxOpenFilesPerClient  int `toml:"max_open_files_per_client"`
	MaxOpenFilesPerNetwork int `toml:"max_open_files_per_network"`
	MaxOpenFilesPerSession int `toml:"max_open_files_per_session"`
	// MaxSubstreamsPerSession bounds the connections a client may bind
	// to one session for parallel data streams (`xrdcp -S N`): default
	// and at most 15, as xrootd. Each counts against the session limits
	// above.
	MaxSubstreamsPerSession int `toml:"max_substreams_per_session"`
	// RequestTimeout is how long a started request (its header, a write's
	// data) may go without a byte before the client is disconnected
	// (default "1m").
	RequestTimeout string `toml:"request_timeout"`
	// WriteTimeout is how long a client may leave an answer unread before
	// it is disconnected, freeing the buffer it holds (default "1m").
	WriteTimeout string `toml:"write_timeout"`
	// IdleTimeout is how long a session may hold no open file and have no
	// request in flight before it is closed, and how long a session with
	// files open only for reading must have been silent before it may be
	// closed when the open-file limits are reached (default "6m", "21m"
	// on a director: a minute longer than the XRootD client keeps an
	// unused connection).
	IdleTimeout string `toml:"idle_timeout"`
	// DrainRedirect (root://host:port) is where this server sends new
	// requests while it drains on a graceful stop: the director it
	// belongs to. Unset: the root:// address the director in [advertise]
	// gave in its answers, else clients are told to wait a few seconds,
	// until the restarted server listens again.
	DrainRedirect string `toml:"drain_redirect"`
}

// TLSEnabled reports whether roots:// is served.
func (r *Settings) TLSEnabled() bool { return r.TLS == nil || *r.TLS }

// Defaults fills unset fields with their documented defaults; the limits
// and timeouts keep 0 for the server's own defaults.
func (r *Settings) Defaults() {
	if r.Addr == "" {
		r.Addr = ":1094"
	}
}

// Config is the server's Config for these settings (limits and timeouts;
// the box adds the rest). Durations have been validated; one unset is 0.
func (r *Settings) Config() Config {
	return Config{RequestTimeout: duration(r.RequestTimeout), WriteTimeout: duration(r.WriteTimeout), IdleTimeout: duration(r.IdleTimeout),
		DrainTo: drainHost(r.DrainRedirect),
		Limits: Limits{Sessions: r.MaxSessions, SessionsPerClient: r.MaxSessionsPerClient, SessionsPerNetwork: r.MaxSessionsPerNetwork,
			OpenFiles: r.MaxOpenFiles, OpenFilesPerClient: r.MaxOpenFilesPerClient, OpenFilesPerNetwork: r.MaxOpenFilesPerNetwork,
			OpenFilesPerSession:  r.MaxOpenFilesPerSession,
			SubstreamsPerSession: r.MaxSubstreamsPerSession}}
}

func duration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// drainHost is the host:port of a root:// URL ("" when unset or not one;
// Validate says why).
func drainHost(raw string) string {
	h, p, err := rootHostPort(raw)
	if raw == "" || err != nil {
		return ""
	}
	return net.JoinHostPort(strings.Trim(h, "[]"), strconv.Itoa(p))
}
