// Package client is sitebox's XRootD protocol client: one multiplexed
// connection per server (Conn), and FS, a store.Store over root:// URLs that
// follows redirects and re-dials after a dropped connection.
package client

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/outbound"
	"sitebox/internal/x509grid"
	"sitebox/internal/xrootd/proto"
)

// maxResponse bounds one response frame from the server (a hostile or
// broken server cannot make us allocate more).
const maxResponse = 64 << 20

// ErrClosed is returned for calls on a connection that has gone away.
var ErrClosed = errors.New("xrootd: connection closed")

// Conn is one logged-in connection. Many requests may be in flight at once;
// each gets a stream id and a reply channel. Safe for concurrent use.
type Conn struct {
	addr string
	nc   net.Conn

	maxWait   time.Duration // Options.MaxWait
	ioTimeout time.Duration // Options.IOTimeout

	wmu sync.Mutex // serialises request frames

	mu      sync.Mutex
	pending map[proto.StreamID]*call
	next    uint16
	err     error // set once the reader stops
	done    chan struct{}
	// filling is the call whose buffer the reader is filling outside mu
	// (see readInto); fillMu is held while it does.
	filling *call
	fillMu  sync.Mutex

	// cred is the proxy the login offered (Options.Proxy), nil for
	// none: an FS retires the connection once the proxy changes.
	cred *x509grid.Credential
	// anonNote says why the login fell back to anonymous (unix) when a
	// proxy was meant to serve: a refusal on the connection names it.
	anonNote string
	// files counts the open files on the connection; a retired one is
	// closed when the last closes.
	files   atomic.Int64
	retired atomic.Bool

	// pieces holds the buffers streamed reads hand their data on in.
	pieces sync.Pool

	// ServerFlags are the kXR_protocol response flags.
	ServerFlags uint32
}

type call struct {
	body  []byte // accumulated kXR_oksofar parts
	reply chan reply
	// dst, when set, receives the data of the answer's kXR_ok and
	// kXR_oksofar frames straight from the socket (a read into the
	// caller's buffer: no allocation, no copy); n bytes have arrived.
	dst []byte
	n   int
	// vec, when set, receives a kXR_readv answer's segments straight into
	// the caller's buffers (see vecSink); pg a kXR_pgread answer's pages,
	// each checked against its CRC32C (see pgSink).
	vec *vecSink
	pg  *pgSink
	// stream, when set, receives a kXR_read answer's data a piece at a
	// time, handed to a streamed read's reader (ReadRange).
	stream *streamSink
}

type reply struct {
	status uint16
	body   []byte
	err    error
}

// Options say how to connect beyond the address: the credentials,
// trust, redirect, dial and wait settings every client shares
// (outbound.Options), and TLS and the I/O timeout.
type Options struct {
	outbound.Options
	// TLS, when set, asks the server to switch to TLS before login
	// (roots://) and verifies it with this configuration; ServerName is
	// taken from the address when empty. A server that switches a plain
	// client to TLS by itself is verified against the system roots. The
	// token goes only over TLS (ztn), at each connection's login.
	TLS *tls.Config
	// IOTimeout bounds the wait for each answer (and each dial and
	// login), so a server that stops answering fails the call instead of
	// hanging it; zero means DefaultIOTimeout. Checksum queries are not
	// bounded by it (see Conn.answer).
	IOTimeout time.Duration
	// PageChecks reads files with kXR_pgread, every 4 KiB page checked
	// against the CRC32C the server sends with it (a mount's integrity
	// protection): a mismatch fails the read, no altered byte is returned.
	PageChecks bool
}

func (o Options) ioTimeout() time.Duration { return cmp.Or(o.IOTimeout, DefaultIOTimeout) }

// Dial connects to addr ("host:port"), performs the handshake, kXR_protocol
// and an anonymous kXR_login.
func Dial(ctx context.Context, addr string) (*Conn, error) { return DialOptions(ctx, addr, Options{}) }

// DialOptions is Dial with TLS and a token: a logged-in (and, where the
// server asks, authenticated) connection.
func DialOptions(ctx context.Context, addr string, opts Options) (*Conn, error) {
	dial := opts.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("xrootd: dial %s: %w", addr, err)
	}
	c := &Conn{addr: addr, nc: nc, pending: map[proto.StreamID]*call{}, done: make(chan struct{}),
		maxWait: opts.Wait(), ioTimeout: opts.ioTimeout()}
	var credErr error
	if opts.Proxy != nil {
		c.cred, credErr = opts.Proxy()
	}
	if err := c.handshake(ctx, opts); err != nil {
		c.nc.Close()
		return nil, fmt.Errorf("xrootd: %s: %w", addr, err)
	}
	go c.readLoop()
	if err := c.login(ctx, opts, credErr); err != nil {
		c.Close()
		return nil, fmt.Errorf("xrootd: %s: %w", addr, err)
	}
	return c, nil
}

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { _, ok := c.nc.(*tls.Conn); return ok }

// handshake sends the client hello and kXR_protocol and reads both answers
// synchronously, before the reader goroutine starts.
func (c *Conn) handshake(ctx context.Context, opts Options) error {
	dl := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.nc.SetDeadline(dl)
	defer c.nc.SetDeadline(time.Time{})
	// A cancelled caller (a client that left, a shutdown) ends the wait at
	// once instead of at the deadline.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Now()) })
	defer stop()
	var hello [proto.HandshakeLen]byte
	binary.BigEndian.PutUint32(hello[12:], proto.HandshakeFourth)
	binary.BigEndian.PutUint32(hello[16:], proto.HandshakeFifth)
	var body [16]byte
	binary.BigEndian.PutUint32(body[0:4], proto.ProtocolVersion)
	if opts.TLS != nil {
		body[4] = proto.ProtoReqAbleTLS | proto.ProtoReqWantTLS
	}
	body[5] = proto.ProtoExpectLogin
	req := proto.EncodeRequest(proto.StreamID{0, 1}, proto.ReqProtocol, body, nil)
	if _, err := c.nc.Write(append(hello[:], req...)); err != nil {
		return err
	}
	h, _, err := proto.ReadResponse(c.nc, 1024)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if h.Status != proto.StatusOK {
		return fmt.Errorf("handshake refused (status %d)", h.Status)
	}
	h, b, err := proto.ReadResponse(c.nc, 4096)
	if err != nil {
		return fmt.Errorf("protocol: %w", err)
	}
	if h.Status != proto.StatusOK || len(b) < 8 {
		return fmt.Errorf("protocol request refused (status %d)", h.Status)
	}
	c.ServerFlags = binary.BigEndian.Uint32(b[4:8])
	switch {
	case c.ServerFlags&proto.ProtoGotoTLS != 0:
		return c.startTLS(ctx, opts)
	case opts.TLS != nil && c.ServerFlags&proto.ProtoHaveTLS == 0:
		return errors.New("roots:// asked for, but the server does not support TLS")
	case opts.TLS != nil:
		return errors.New("roots:// asked for, but the server did not switch to TLS")
	}
	return nil
}

// startTLS runs the client side of the TLS handshake the server asked for
// right after its kXR_protocol answer.
func (c *Conn) startTLS(ctx context.Context, opts Options) error {
	cfg := opts.TLS
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(c.addr)
	}
	tc := tls.Client(c.nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	c.nc = tc
	return nil
}

func (c *Conn) login(ctx context.Context, opts Options, credErr error) error {
	var body [16]byte
	binary.BigEndian.PutUint32(body[0:4], uint32(os.Getpid()))
	copy(body[4:12], userName())
	body[14] = proto.LoginVer005
	resp, err := c.Do(ctx, proto.ReqLogin, body, nil)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	if len(resp) > 16 {
		return c.authenticate(ctx, string(resp[16:]), opts, credErr)
	}
	return nil
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "sitebox"
}

// Addr is the server address this connection reaches.
func (c *Conn) Addr() string { return c.addr }

// Close ends the connection; pending calls fail with ErrClosed.
func (c *Conn) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}

// Err reports why the connection stopped, or nil while it works.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// readLoop delivers each response frame to its call.
func (c *Conn) readLoop() {
	defer close(c.done)
	for {
		h, err := proto.ReadResponseHeader(c.nc, maxResponse)
		if err == nil {
			err = c.readFrame(h)
		}
		if err != nil {
			c.fail(fmt.Errorf("%w: %s: %v", ErrClosed, c.addr, err))
			return
		}
	}
}

// fail marks the connection broken and fails every pending call.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	pending := c.pending
	c.pending = map[proto.StreamID]*call{}
	c.mu.Unlock()
	c.nc.Close()
	for _, cl := range pending {
		cl.reply <- reply{err: err}
	}
}
