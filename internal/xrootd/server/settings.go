package server

import (
	"net"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/units"
)

// Settings configures the root:// (XRootD protocol) frontend: [root] in
// the config file decodes straight into it, and the server takes it as
// it is, embedded in its Config.
type Settings struct {
	// Addr is the listen address (default ":1094"); "off" disables it.
	Addr string `toml:"addr"`
	// ServeTLS serves roots:// (TLS switched on in-band, as XRootD does)
	// with the https certificate; default true. Tokens over root:// need
	// it.
	ServeTLS *bool `toml:"tls"`
	// Limits on what clients may hold, so a few connections cannot take
	// the descriptors everyone needs: max_sessions,
	// max_sessions_per_client, max_sessions_per_network, max_open_files,
	// max_open_files_per_client, max_open_files_per_network,
	// max_open_files_per_session and max_substreams_per_session (see
	// Limits for their defaults). 0 takes the default, -1 means no
	// limit. A client over a limit gets kXR_Overloaded (a session's own
	// file table: kXR_NoMemory, as XRootD) naming it, logged once per
	// client and minute. The defaults stay well inside the descriptors
	// of the packaged unit (LimitNOFILE) and of a common 65536 limit,
	// with room for https.
	Limits
	// The timeouts are 0 when unset, for the server's defaults
	// (Config.defaults); the tag nonzero has the config's type check
	// refuse a "0s" in the file, no timeout the server could keep.
	//
	// RequestTimeout is how long a started request (its header, a write's
	// data) may go without a byte before the client is disconnected
	// (default "1m"; at least 1s).
	RequestTimeout units.Duration `toml:"request_timeout" nonzero:"duration of at least 1s"`
	// WriteTimeout is how long a client may leave an answer unread before
	// it is disconnected, freeing the buffer it holds (default "1m"; at
	// least 1s).
	WriteTimeout units.Duration `toml:"write_timeout" nonzero:"duration of at least 1s"`
	// IdleTimeout is how long a session may hold no open file and have no
	// request in flight before it is closed, and how long a session with
	// files open only for reading must have been silent before it may be
	// closed when the open-file limits are reached (default "6m",
	// "21m" on a director: a minute longer than the XRootD client keeps
	// an unused connection; at least 1s).
	IdleTimeout units.Duration `toml:"idle_timeout" nonzero:"duration of at least 1s"`
	// DrainRedirect (root://host:port) is where this server sends new
	// requests while it drains on a graceful stop: the director it
	// belongs to. Unset: the root:// address the director in [advertise]
	// gave in its answers, else clients are told to wait a few seconds,
	// until the restarted server listens again.
	DrainRedirect string `toml:"drain_redirect"`
}

// TLSEnabled reports whether roots:// is served.
func (r *Settings) TLSEnabled() bool { return r.ServeTLS == nil || *r.ServeTLS }

// Defaults fills unset fields with their documented defaults; the limits
// and timeouts keep 0 for the server's own defaults (Config.defaults),
// which depend on the descriptors the process may open and on the role.
func (r *Settings) Defaults() {
	if r.Addr == "" {
		r.Addr = ":1094"
	}
}

// Validate returns every problem in r, keyed as in the file
// ("root.request_timeout").
func (r *Settings) Validate() []problem.Problem {
	ps := problem.List{Section: "root"}
	if msg := problem.CheckAddr(r.Addr); msg != "" {
		ps.Add("addr", "%s", msg)
	}
	if u := r.DrainRedirect; u != "" {
		if msg := problem.CheckURL(u, "root"); msg != "" {
			ps.Add("drain_redirect", "%s", msg)
		}
	}
	for _, l := range []struct {
		key string
		v   int
	}{
		{"max_sessions", r.Sessions},
		{"max_sessions_per_client", r.SessionsPerClient},
		{"max_sessions_per_network", r.SessionsPerNetwork},
		{"max_open_files", r.OpenFiles},
		{"max_open_files_per_client", r.OpenFilesPerClient},
		{"max_open_files_per_network", r.OpenFilesPerNetwork},
		{"max_open_files_per_session", r.OpenFilesPerSession},
	} {
		if msg := problem.CheckLimit(l.v); msg != "" {
			ps.Add(l.key, "%s", msg)
		}
	}
	if v := r.SubstreamsPerSession; v < -1 || v > maxSubstreams {
		ps.Add("max_substreams_per_session", "%d is not a limit (1 to %d, the protocol's most; 0 for the default %d)", v, maxSubstreams, maxSubstreams)
	}
	for _, d := range []struct {
		key string
		v   units.Duration
	}{
		{"request_timeout", r.RequestTimeout},
		{"write_timeout", r.WriteTimeout},
		{"idle_timeout", r.IdleTimeout},
	} {
		if d.v == 0 {
			continue // unset
		}
		if msg := problem.CheckAtLeast(d.v.D(), time.Second); msg != "" {
			ps.Add(d.key, "%s", msg)
		}
	}
	return ps.All
}

// DrainTo is the host:port of DrainRedirect ("" when unset; Validate
// refuses one that is no root:// URL).
func (r *Settings) DrainTo() string {
	h, p, err := rootHostPort(r.DrainRedirect)
	if r.DrainRedirect == "" || err != nil {
		return ""
	}
	return net.JoinHostPort(strings.Trim(h, "[]"), strconv.Itoa(p))
}
