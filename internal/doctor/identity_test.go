package doctor

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/config"
)

// serve accepts on a loopback port and hands each connection to handle.
func serve(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return ln.Addr().String()
}

// listenXRootD answers XRootD's handshake as a data server does.
func listenXRootD(t *testing.T) string {
	return serve(t, func(c net.Conn) {
		hs := make([]byte, 20)
		if _, err := io.ReadFull(c, hs); err != nil {
			return
		}
		resp := make([]byte, 16)
		binary.BigEndian.PutUint32(resp[4:], 8)
		binary.BigEndian.PutUint32(resp[8:], 0x520)
		binary.BigEndian.PutUint32(resp[12:], 1)
		c.Write(resp)
	})
}

// listenTLS serves TLS with the cert.pem and key.pem of the directory set
// later (the test's config names the port before the certificate exists).
func listenTLS(t *testing.T) (addr string, setDir func(string)) {
	var dir atomic.Pointer[string]
	addr = serve(t, func(c net.Conn) {
		tc := tls.Server(c, &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			cert, err := tls.LoadX509KeyPair(filepath.Join(*dir.Load(), "cert.pem"), filepath.Join(*dir.Load(), "key.pem"))
			return &cert, err
		}})
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		tc.Handshake()
	})
	return addr, func(d string) { dir.Store(&d) }
}

// A port held by a program that is not the box is an error naming the
// way it differs; the box itself answers.
func TestIdentity(t *testing.T) {
	o := Options{Timeout: 2 * time.Second}.withDefaults()
	other := listen(t) // accepts and hangs up: not XRootD, not TLS
	https, setDir := listenTLS(t)
	cfg := baseConfig(t, other, https)
	setDir(t.TempDir()) // another certificate than the box's
	writeCert(t, filepath.Join(cfg.Server.StateDir, "tls"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "127.0.0.1")
	cs := checkIdentity(context.Background(), cfg, o)
	if len(cs) != 2 {
		t.Fatalf("checks: %+v", cs)
	}
	mustHave(t, cs[0], StatusError, "another program holds the port", "XRootD's handshake", "ss -ltnp")

	// The TLS listener's directory has no certificate yet: a handshake
	// failure is "does not speak TLS"; with another certificate, "not the box's".
	mustHave(t, cs[1], StatusError, "another program holds the port")
	otherDir := t.TempDir()
	writeCert(t, otherDir, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "127.0.0.1")
	setDir(otherDir)
	mustHave(t, checkIdentity(context.Background(), cfg, o)[1], StatusError, "not the box's")

	setDir(filepath.Join(cfg.Server.StateDir, "tls"))
	cfg.Root.Addr = listenXRootD(t)
	for _, c := range checkIdentity(context.Background(), cfg, o) {
		mustHave(t, c, StatusOK, "this box answers")
	}
}

// A read-only directory is an error, not "fine".
func TestWritable(t *testing.T) {
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Cache.Dir = filepath.Join(t.TempDir(), "cache", "sub")
	ro := cfg.Server.StateDir
	o := Options{WriteProbe: func(dir string) error {
		if dir == ro {
			return &net.OpError{Op: "open", Err: syscall.EROFS}
		}
		return writeProbe(dir)
	}}.withDefaults()
	cs := checkWritable(context.Background(), cfg, o)
	mustHave(t, cs[0], StatusError, "cannot write in "+ro, "read-only file system", "ReadWritePaths")
	mustHave(t, cs[1], StatusOK, "not there yet")
	mustHave(t, cs[2], StatusOK, "writable")
}
