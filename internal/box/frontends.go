package box

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/config"
	"sitebox/internal/tlsutil"
	"sitebox/internal/tpc/tpcremote"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// buildFrontends binds the root:// and https:// listeners the config asks
// for and builds their servers over the box's store.
func (b *Box) buildFrontends() error {
	var err error
	var tc *tls.Config
	if b.cfg.Root.Addr != config.Off && b.cfg.Root.TLSEnabled() || b.cfg.HTTPS.Addr != config.Off && !b.cfg.HTTPS.PlainHTTP {
		if tc, err = b.serverTLS(); err != nil {
			return err
		}
	}

	access, err := b.openAccessLog()
	if err != nil {
		return err
	}
	tpcAllow := b.cfg.TPC.Policy()
	if b.cfg.Root.Addr != config.Off {
		if b.rootLn, err = net.Listen("tcp", b.cfg.Root.Addr); err != nil {
			return fmt.Errorf("root:// listener: %w", err)
		}
		rc := b.cfg.Root.Config()
		rc.ServerName, rc.Manager, rc.Observer = b.cfg.Server.Name, b.director != nil, b.transfers
		if b.cfg.Root.TLSEnabled() {
			rc.TLS = tc
		}
		if b.tokens != nil {
			rc.Tokens = b.tokens
		}
		rc.TPC, rc.AccessLog = tpcremote.Dialer{Allow: tpcAllow}, access
		b.withKerberos(&rc, nil)
		b.root = xrdserver.New(rc, b.store, b.log.With("component", "root"))
	}
	if b.cfg.HTTPS.Addr != config.Off {
		if b.httpsLn, err = net.Listen("tcp", b.cfg.HTTPS.Addr); err != nil {
			return fmt.Errorf("https:// listener: %w", err)
		}
		wc := b.cfg.HTTPS.Config()
		wc.ServerName, wc.Observer = b.cfg.Server.Name, b.transfers
		if b.tokens != nil {
			wc.Tokens = b.tokens
		}
		wc.TPC, wc.AccessLog = tpcremote.Dialer{Allow: tpcAllow}, access
		b.withKerberos(nil, &wc)
		h := webdav.New(wc, b.store, b.log.With("component", "https"))
		b.httpsLn = webdav.LimitListener(b.httpsLn, b.cfg.HTTPS.ConnsPerClient(), b.log.With("component", "https"))
		// No ReadTimeout or WriteTimeout: transfers take as long as they
		// keep moving. Headers have HeaderTimeout, upload bodies the
		// handler's BodyTimeout on progress, and an idle keep-alive
		// connection is closed after IdleTimeout.
		b.https = &http.Server{Handler: b.httpsHandler(h), ReadHeaderTimeout: b.cfg.HTTPS.ReadHeaderTimeout(), IdleTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(b.log.Handler(), slog.LevelDebug), ConnState: b.connStates}
		if !b.cfg.HTTPS.PlainHTTP {
			b.https.TLSConfig = tc
		}
		if !b.cfg.HTTPS.HTTP2 {
			b.https.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // HTTP/1.1 only
		}
	}
	return nil
}

// openAccessLog opens [server] access_log; nil when there is none.
func (b *Box) openAccessLog() (accesslog.Sink, error) {
	dest := b.cfg.Server.AccessLog
	if dest == "" {
		return nil, nil
	}
	log := b.log.With("component", "access_log")
	l, err := accesslog.Open(dest, b.cfg.Server.AccessLogFormat, func(err error) {
		log.Error("cannot write the access log", "err", err)
	})
	if err != nil {
		return nil, fmt.Errorf("server.access_log: %w", err)
	}
	b.closers = append(b.closers, l.Close)
	return l, nil
}

// serverTLS is the box's certificate for https:// and roots://: the
// configured one, one from the federation CA, or a self-signed one kept in
// the state dir.
func (b *Box) serverTLS() (*tls.Config, error) {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if hn, err := os.Hostname(); err == nil {
		hosts = append(hosts, hn)
	}
	if b.cfg.HTTPS.Cert == "" {
		// A certificate from the federation CA, when there is one, rather
		// than a self-signed one no other box or user trusts.
		if tc, err := b.federationTLS(hosts); tc != nil || err != nil {
			return tc, err
		}
	}
	tc, err := tlsutil.LoadOrCreate(b.cfg.HTTPS.Cert, b.cfg.HTTPS.Key, filepath.Join(b.cfg.Server.StateDir, "tls"), hosts)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	return tc, nil
}
