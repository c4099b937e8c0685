package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
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
	batch := &recordBatcher{Conn: under}
	tc := tls.Server(batch, s.srv.cfg.TLS)
	tc.SetDeadline(time.Now().Add(s.srv.cfg.HandshakeTimeout))
	if err := tc.HandshakeContext(s.ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	tc.SetDeadline(time.Time{})
	batch.start()
	s.readDL.forget()
	s.wmu.Lock()
	s.writeDL.forget()
	s.conn = tc
	s.tlsw = bufio.NewWriterSize(tc, tlsWriteBuffer)
	s.batch = batch
	s.wmu.Unlock()
	s.br = bufio.NewReaderSize(timedReader{s}, 16<<10)
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

// recordBatcher sits under the TLS session and gathers the records of one
// response into few large socket writes: crypto/tls writes every 16 KiB
// record with a syscall of its own, which on this kind of machine costs
// more than encrypting it. It passes writes straight through until start
// (the handshake must not wait), then holds them until flush or until
// batchSize is reached.
type recordBatcher struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      []byte
}

// batchSize bounds what one socket write carries: a few loopback-sized
// TCP segments.
const batchSize = 256 << 10

func (b *recordBatcher) start() {
	b.mu.Lock()
	b.batching = true
	b.buf = make([]byte, 0, batchSize)
	b.mu.Unlock()
}

func (b *recordBatcher) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.batching {
		return b.Conn.Write(p)
	}
	if len(b.buf)+len(p) > cap(b.buf) {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > cap(b.buf) {
			return b.Conn.Write(p)
		}
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// flush sends what is held; the session calls it after each response.
func (b *recordBatcher) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *recordBatcher) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}
