package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"time"
)

// startTLS turns the connection into the server side of a TLS session, as
// XRootD does right after a kXR_protocol answer carrying kXR_gotoTLS: the
// client's next bytes are its ClientHello (roots://, or root:// to a
// server that asks for TLS). Runs on the reader goroutine before login,
// when nothing else uses the connection.
func (s *session) startTLS() error {
	// Bytes the reader already buffered belong to the handshake.
	var under net.Conn = s.raw
	if n := s.br.Buffered(); n > 0 {
		early, _ := s.br.Peek(n)
		under = &prefixConn{Conn: s.raw, r: io.MultiReader(bytes.NewReader(bytes.Clone(early)), s.raw)}
	}
	tc := tls.Server(under, s.srv.cfg.TLS)
	tc.SetDeadline(time.Now().Add(s.srv.cfg.HandshakeTimeout))
	if err := tc.HandshakeContext(s.ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	tc.SetDeadline(time.Time{})
	s.wmu.Lock()
	s.conn = tc
	s.tlsw = bufio.NewWriterSize(tc, tlsWriteBuffer)
	s.wmu.Unlock()
	s.br = bufio.NewReaderSize(tc, 16<<10)
	s.tls = true
	s.log.Debug("connection upgraded to TLS", "version", tls.VersionName(tc.ConnectionState().Version))
	return nil
}

// tlsWriteBuffer gathers a response's parts into full TLS records (16 KiB
// of payload each) before they reach the connection.
const tlsWriteBuffer = 64 << 10

// prefixConn reads from r (buffered bytes, then the socket) and does
// everything else on the socket.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }
