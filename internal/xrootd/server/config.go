package server

import (
	"crypto/tls"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/cksum"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
	"sitebox/internal/units"
	"sitebox/internal/xrootd/gsi"
	"sitebox/internal/xrootd/proto"
)

// Config tunes the server: the [root] settings of the config file and
// what the box adds at run time. The zero value is valid; defaults are
// noted.
type Config struct {
	// Settings are [root] as the file gives them: limits, timeouts,
	// drain_redirect (Addr and ServeTLS are the box's to act on).
	Settings
	// TPC reaches the source of a root:// third-party copy this server is
	// the destination of. Nil: such copies are refused and query config
	// answers tpc 0.
	TPC tpc.Remote
	// CopyBuffers bounds the memory of the copies this server runs; the
	// box gives every frontend the same one, so the bound is box-wide.
	// Nil: a budget of this server's own (tpc.BufferMemoryFor(0)).
	CopyBuffers *tpc.Budget
	// MaxReadChunk is the size of the pooled transfer buffers and so the
	// largest data frame of a buffered read, pgread or readv response;
	// bigger reads go out as several frames (kXR_oksofar or partial
	// kXR_status). Reads sent with sendfile need no buffer and use frames
	// of up to 8 MiB. Rounded down to a multiple of 4 KiB, at least 64 KiB.
	// Default 2 MiB, as XRootD. readv segments are limited to
	// MaxReadChunk-16 bytes (announced as readv_ior_max).
	MaxReadChunk int
	// MaxRequestData caps a write or pgwrite payload (default 16 MiB +
	// 64 KiB: room for xrdcp's 8 MiB chunks and their CRCs). A larger
	// frame is answered with kXR_ArgTooLong and the connection closed, as
	// it cannot be resynchronised without reading the payload.
	MaxRequestData int
	// MaxInFlight bounds the requests one connection has executing at
	// once (default 64); the session stops reading until one finishes.
	MaxInFlight int
	// MaxBufferMemory bounds the memory of the pooled transfer buffers
	// (default 32 MiB, at least two chunks). Each connection holds at most
	// two; when all are in use, requests use 64 KiB spare buffers instead
	// of waiting (readv with larger segments waits for the pool).
	MaxBufferMemory int
	// Checksums are the algorithms the box offers, which query config
	// chksum lists; the store computes them (and refuses the others).
	// The zero value: adler32 and crc32c.
	Checksums cksum.Offered
	// ReadOnly refuses every change (kXR_fsReadOnly) even where the store
	// allows it.
	ReadOnly bool
	// DisablePgRW stops announcing kXR_suppgrw. Clients then use plain
	// reads and writes (sent with sendfile) instead of pgread/pgwrite with
	// per-page CRC32C; pgread and pgwrite are still served if asked for.
	DisablePgRW bool
	// Manager announces a redirector (kXR_isManager) instead of a data
	// server, as a cmsd manager does. XRootD clients then treat it as
	// their load balancer: they come back to it with tried= when the
	// server it sent them to fails, and `xrdfs ls` lists every server
	// it locates instead of asking it alone.
	Manager bool
	// TLS enables roots://: the server announces kXR_haveTLS and switches
	// a client that asks for it to TLS before login. Nil: plain only.
	TLS *tls.Config
	// Auth verifies the credentials clients present: bearer tokens, from
	// the ztn security protocol (over TLS) and from authz= CGI (ignored
	// when it takes none), and Kerberos tickets from the krb5 protocol
	// (offered when it takes them, see krb5.go). Nil: none.
	Auth *auth.Authenticator
	// GSI answers XRootD's gsi security protocol, the handshake proving
	// an X.509 chain, which it hands to Auth (see gsi.go). Nil: not
	// offered.
	GSI *gsi.Server
	// Observer is told of the bytes moved and the connections, for
	// metrics. Nil: nothing is counted.
	Observer store.TransferObserver
	// ServerName names this server in logs and is the default Site
	// (default "sitebox").
	ServerName string
	// Site is the answer to query config "sitename" (default ServerName).
	Site string
	// HandshakeTimeout bounds the wait for a new connection's hello
	// (default 30 seconds).
	HandshakeTimeout time.Duration
	// AccessLog takes one line per file, from open to close. Nil: none.
	AccessLog accesslog.Sink
	// DrainWait is the kXR_wait a draining server answers with when it
	// has nowhere to send them (no DrainRedirect; default 3 s).
	DrainWait time.Duration
	// setupGrace is how long a new session is safe from being closed for
	// a newcomer from its own address (default defaultSetupGrace; tests
	// shorten it).
	setupGrace time.Duration
}

func (c *Config) defaults() {
	if c.MaxReadChunk <= 0 {
		c.MaxReadChunk = 2 << 20
	}
	c.MaxReadChunk = max(c.MaxReadChunk&^(proto.PgPageSize-1), 64<<10)
	if c.MaxRequestData <= 0 {
		c.MaxRequestData = 16<<20 + 64<<10
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 64
	}
	if c.MaxBufferMemory <= 0 {
		c.MaxBufferMemory = 32 << 20
	}
	if c.CopyBuffers == nil {
		c.CopyBuffers = tpc.NewBudget(tpc.BufferMemoryFor(0))
	}
	if c.ServerName == "" {
		c.ServerName = "sitebox"
	}
	if c.Site == "" {
		c.Site = c.ServerName
	}
	// WriteTimeout bounds the wait for a client to take more of a
	// response: one that stops reading its answers is disconnected then,
	// freeing its buffer. Over plain TCP it is the time without progress;
	// over TLS, the time for one frame (at most MaxReadChunk).
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = units.Duration(time.Minute)
	}
	// RequestTimeout bounds the wait for the rest of a request once its
	// first byte arrived: the 24-byte header and its payload, a write's
	// data included. A client that starts a request and goes silent is
	// disconnected then.
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = units.Duration(time.Minute)
	}
	c.Limits.defaults()
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 30 * time.Second
	}
	// IdleTimeout closes a connection that has no open files and no
	// requests in flight for this long, so abandoned connections do not
	// hold descriptors for ever; a connection whose files, all open for
	// reading, have been untouched this long may be closed when others
	// need its place (reclaim.go).
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = units.Duration(defaultIdleTimeout)
		if c.Manager {
			c.IdleTimeout = units.Duration(defaultManagerIdleTimeout)
		}
	}
	if c.DrainWait <= 0 {
		c.DrainWait = defaultDrainWait
	}
	if c.setupGrace <= 0 {
		c.setupGrace = defaultSetupGrace
	}
}

// The default idle timeouts: a minute longer than XrdCl keeps an unused
// connection to a data server (DataServerTTL, 300 s) and to a redirector
// (LoadBalancerTTL, 1200 s), so that the client closes it first.
const (
	defaultIdleTimeout        = 6 * time.Minute
	defaultManagerIdleTimeout = 21 * time.Minute
)
