package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/xrootd/proto"
)

// The director benchmark's load generator speaks root:// itself, on our
// proto framing, rather than through internal/xrootd/client: that client
// follows kXR_redirect and honours kXR_wait, while the benchmark must see
// both answers and stop at the redirect.

// loadTimeout bounds one round trip: a redirector that takes longer is
// broken, not slow.
const loadTimeout = 30 * time.Second

// maxLoadResponse bounds one answer; redirects, waits, errors and stat
// answers are all tiny.
const maxLoadResponse = 1 << 20

// loadConn is one logged-in connection with one request in flight at a
// time, so a round trip's latency is the server's alone.
type loadConn struct {
	addr string
	nc   net.Conn
	br   *bufio.Reader
	sid  uint16
}

// dialLoad connects, sends the hello with kXR_protocol, and logs in
// anonymously, as our client and XrdCl do.
func dialLoad(ctx context.Context, addr string) (*loadConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &loadConn{addr: addr, nc: nc, br: bufio.NewReader(nc)}
	if err := c.hello(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	var login [16]byte
	binary.BigEndian.PutUint32(login[0:4], uint32(os.Getpid()))
	copy(login[4:12], "sbxbench")
	login[14] = proto.LoginVer005
	if st, body, err := c.roundTrip(proto.ReqLogin, login, nil); err != nil || st != proto.StatusOK {
		nc.Close()
		if err == nil {
			err = answerError(st, body)
		}
		return nil, fmt.Errorf("%s: login: %w", addr, err)
	}
	return c, nil
}

// hello sends the 20-byte handshake followed at once by kXR_protocol,
// and reads both answers.
func (c *loadConn) hello() error {
	c.nc.SetDeadline(time.Now().Add(loadTimeout))
	defer c.nc.SetDeadline(time.Time{})
	var hs [proto.HandshakeLen]byte
	binary.BigEndian.PutUint32(hs[12:], proto.HandshakeFourth)
	binary.BigEndian.PutUint32(hs[16:], proto.HandshakeFifth)
	var body [16]byte
	binary.BigEndian.PutUint32(body[0:4], proto.ProtocolVersion)
	c.sid++
	req := proto.EncodeRequest(c.streamID(), proto.ReqProtocol, body, nil)
	if _, err := c.nc.Write(append(hs[:], req...)); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	for _, step := range []string{"handshake", "protocol"} {
		h, b, err := proto.ReadResponse(c.br, 4096)
		if err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		if h.Status != proto.StatusOK {
			return fmt.Errorf("%s: %w", step, answerError(h.Status, b))
		}
	}
	return nil
}

func (c *loadConn) streamID() proto.StreamID {
	var s proto.StreamID
	binary.BigEndian.PutUint16(s[:], c.sid)
	return s
}

// roundTrip sends one request and returns the status and body of its
// answer. A transport error leaves the connection unusable.
func (c *loadConn) roundTrip(id uint16, body [16]byte, data []byte) (uint16, []byte, error) {
	c.sid++
	if c.sid == 0 {
		c.sid = 1
	}
	sid := c.streamID()
	c.nc.SetDeadline(time.Now().Add(loadTimeout))
	if _, err := c.nc.Write(proto.EncodeRequest(sid, id, body, data)); err != nil {
		return 0, nil, fmt.Errorf("%s: send %s: %w", c.addr, proto.RequestName(id), err)
	}
	var all []byte
	for {
		h, b, err := proto.ReadResponse(c.br, maxLoadResponse)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %s: %w", c.addr, proto.RequestName(id), err)
		}
		if h.Stream != sid {
			return 0, nil, fmt.Errorf("%s: %s: answer for stream %v, sent %v", c.addr, proto.RequestName(id), h.Stream, sid)
		}
		if h.Status == proto.StatusOKSoFar {
			all = append(all, b...)
			continue
		}
		return h.Status, append(all, b...), nil
	}
}

func (c *loadConn) Close() error { return c.nc.Close() }

// loadOp is the request a load client repeats for one path after another,
// and the answer that counts as done.
type loadOp struct {
	name string // for messages: "open (read)", "stat"
	id   uint16
	body [16]byte
	want uint16 // proto.StatusRedirect through a redirector, StatusOK direct
	// wantPort, when set, is the port a redirect must name: the data
	// server's, so a redirect anywhere else counts as an error.
	wantPort int
}

// openOp is kXR_open for reading, expected to be redirected to the data
// server on dataPort.
func openOp(dataPort int) *loadOp {
	op := &loadOp{name: "open (read)", id: proto.ReqOpen, want: proto.StatusRedirect, wantPort: dataPort}
	binary.BigEndian.PutUint16(op.body[2:4], proto.OpenRead)
	return op
}

// statOp is kXR_stat, expected to be answered by the server asked.
func statOp() *loadOp {
	return &loadOp{name: "stat", id: proto.ReqStat, want: proto.StatusOK}
}

// errTransport marks an error after which the connection is dead.
type errTransport struct{ err error }

func (e errTransport) Error() string { return e.err.Error() }
func (e errTransport) Unwrap() error { return e.err }

// errDeadline is returned when a kXR_wait would last past the end of the
// measurement: the request is neither a success nor an error.
var errDeadline = errors.New("wait past the end of the measurement")

// attempt sends op for path until the answer is something other than
// kXR_wait, sleeping as each wait asks, but not past until. It returns the
// latency of the final round trip and the number of waits before it.
func (c *loadConn) attempt(ctx context.Context, op *loadOp, path string, until time.Time) (time.Duration, int, error) {
	for waits := 0; ; waits++ {
		t0 := time.Now()
		st, body, err := c.roundTrip(op.id, op.body, []byte(path))
		lat := time.Since(t0)
		if err != nil {
			return 0, waits, errTransport{err}
		}
		switch {
		case st == op.want:
			if st == proto.StatusRedirect {
				if err := checkRedirect(body, op.wantPort); err != nil {
					return 0, waits, fmt.Errorf("%s %s: %w", op.name, path, err)
				}
			}
			return lat, waits, nil
		case st == proto.StatusWait:
			d := waitOf(body)
			if time.Now().Add(d).After(until) {
				return 0, waits + 1, errDeadline
			}
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return 0, waits + 1, ctx.Err()
			}
		case st == proto.StatusOK && op.id == proto.ReqOpen:
			// Opened where it should have been redirected: close the
			// handle so the server does not keep files open.
			if len(body) >= 4 {
				var h [16]byte
				copy(h[:4], body[:4])
				if _, _, err := c.roundTrip(proto.ReqClose, h, nil); err != nil {
					return 0, waits, errTransport{err}
				}
			}
			return 0, waits, fmt.Errorf("%s %s: the server opened the file itself instead of redirecting", op.name, path)
		default:
			return 0, waits, fmt.Errorf("%s %s: %w", op.name, path, answerError(st, body))
		}
	}
}

// waitOf reads ServerResponseBody_Wait's seconds. Zero asks for an
// immediate retry; a short pause keeps that from spinning.
func waitOf(body []byte) time.Duration {
	if len(body) < 4 {
		return time.Second
	}
	secs := int32(binary.BigEndian.Uint32(body[:4]))
	if secs <= 0 {
		return 10 * time.Millisecond
	}
	return time.Duration(secs) * time.Second
}

// checkRedirect reads ServerResponseBody_Redirect (int32 port, then
// "host[?cgi]") and checks the port when wantPort is set.
func checkRedirect(body []byte, wantPort int) error {
	if len(body) < 4 {
		return fmt.Errorf("redirect of %d bytes", len(body))
	}
	port := int(int32(binary.BigEndian.Uint32(body[:4])))
	host, _, _ := strings.Cut(strings.TrimRight(string(body[4:]), "\x00"), "?")
	if wantPort > 0 && port != wantPort {
		return fmt.Errorf("redirected to %s, not to the data server's port %d", net.JoinHostPort(host, strconv.Itoa(port)), wantPort)
	}
	return nil
}

// answerError describes an answer that is neither the wanted one nor a
// wait: kXR_error with its code and message, or the bare status.
func answerError(st uint16, body []byte) error {
	if st == proto.StatusError && len(body) >= 4 {
		code := int32(binary.BigEndian.Uint32(body[:4]))
		return fmt.Errorf("kXR_error %d: %s", code, strings.TrimRight(string(body[4:]), "\x00\n "))
	}
	if st == proto.StatusRedirect {
		return fmt.Errorf("unexpected kXR_redirect (%q)", trimMsg(body[min(4, len(body)):]))
	}
	return fmt.Errorf("unexpected status %d (%q)", st, trimMsg(body))
}

func trimMsg(b []byte) string {
	s := strings.TrimRight(string(b), "\x00\n ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
