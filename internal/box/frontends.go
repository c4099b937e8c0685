package box

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/accesslog"
	"sitebox/internal/config"
	"sitebox/internal/metrics"
	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/tpc/tpcremote"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// frontends are a root:// and an https:// listener serving one store.
// A box has one set for its data; a director that shares the box with an
// origin or a cache has a second set of its own, so that its redirects
// to the box's data roles never lead back to itself.
type frontends struct {
	rootLn  net.Listener
	httpsLn net.Listener
	root    *xrdserver.Server
	https   *http.Server
}

// listenAddrs are the two addresses of a set, "off" for none.
type listenAddrs struct{ root, https string }

// buildFrontends binds the root:// and https:// listeners the config asks
// for and builds their servers over the box's store: the data listeners
// ([root], [https]) and, when the director has listeners of its own, the
// director's.
func (b *Box) buildFrontends() error {
	var err error
	var tc *tls.Config
	if b.cfg.Root.Addr != config.Off && b.cfg.Root.TLSEnabled() || b.cfg.HTTPS.Addr != config.Off && !b.cfg.HTTPS.PlainHTTP || b.dirStore != nil {
		if tc, err = b.serverTLS(); err != nil {
			return err
		}
	}
	access, err := b.openAccessLog()
	if err != nil {
		return err
	}
	primary := b.dirStore == nil && b.director != nil // the director is the box's namespace
	data := listenAddrs{root: b.cfg.Root.Addr, https: b.cfg.HTTPS.Addr}
	if err = b.buildSet(&b.data, data, b.store, tc, access, primary, "", b.httpsHandler); err != nil {
		return err
	}
	if b.dirStore != nil {
		d := listenAddrs{root: orOff(b.cfg.Director.RootAddr), https: orOff(b.cfg.Director.HTTPSAddr)}
		b.dir = &frontends{}
		if err = b.buildSet(b.dir, d, b.dirStore, tc, access, true, "director ", b.directorHandler); err != nil {
			return err
		}
	}
	return nil
}

func orOff(addr string) string {
	if addr == "" {
		return config.Off
	}
	return addr
}

// buildSet binds one set of listeners at addrs over st. manager makes the
// root:// server announce a redirector; what names the set in errors
// ("" or "director "); handler wraps the namespace with the API the set
// serves next to it.
func (b *Box) buildSet(fe *frontends, addrs listenAddrs, st store.Store, tc *tls.Config, access accesslog.Sink, manager bool, what string, handler func(http.Handler) http.Handler) error {
	var err error
	tpcDialer := tpcremote.Dialer{Allow: b.cfg.TPC.Policy(), Options: remote.Options{Options: outbound.Options{GridRoots: b.outbound.roots}}}
	if b.outbound.tpcProxy != nil {
		tpcDialer.Proxy, tpcDialer.ProxyHosts = b.outbound.tpcProxy, b.cfg.TPC.ProxyHostList()
	}
	if addrs.root != config.Off {
		if fe.rootLn, err = net.Listen("tcp", addrs.root); err != nil {
			return fmt.Errorf("%sroot:// listener: %w", what, err)
		}
		rc := xrdserver.Config{Settings: b.cfg.Root}
		rc.ServerName, rc.Manager, rc.Observer = b.cfg.Server.Name, manager, b.transfers
		rc.Checksums = b.cfg.Server.Offered()
		if b.cfg.Root.TLSEnabled() {
			rc.TLS = tc
		}
		rc.Auth = b.authn
		rc.TPC, rc.CopyBuffers, rc.AccessLog = tpcDialer, b.copies, access
		b.withGSI(&rc)
		fe.root = xrdserver.New(rc, st, b.log.With("component", strings.TrimSpace(what+"root")))
		if b.registry != nil {
			listener := cmp.Or(strings.TrimSpace(what), "data")
			b.registry.MustRegister(metrics.NewRootCollector(listener, fe.root.LimitStats))
		}
	}
	if addrs.https != config.Off {
		if fe.httpsLn, err = net.Listen("tcp", addrs.https); err != nil {
			return fmt.Errorf("%shttps:// listener: %w", what, err)
		}
		wc := webdav.Config{Settings: b.cfg.HTTPS}
		wc.ServerName, wc.Observer = b.cfg.Server.Name, b.transfers
		wc.Auth = b.authn
		wc.TPC, wc.CopyBuffers, wc.AccessLog = tpcDialer, b.copies, access
		if what == "" {
			wc.Self = b.isSelf // a Destination naming the box's data listeners by another name
		}
		fe.https = &http.Server{}
		b.withClientCerts(fe.https, &wc)
		log := b.log.With("component", strings.TrimSpace(what+"https"))
		h := webdav.New(wc, st, log)
		conns := webdav.NewConnLimiter(b.cfg.HTTPS.ConnsPerClient(), b.cfg.HTTPS.ConnsPerNetwork(), log)
		fe.httpsLn = conns.Listener(fe.httpsLn)
		// No ReadTimeout or WriteTimeout: transfers take as long as they
		// keep moving. Headers have HeaderTimeout, upload bodies the
		// handler's BodyTimeout on progress, and an idle keep-alive
		// connection is closed after IdleTimeout.
		fe.https.Handler, fe.https.ReadHeaderTimeout, fe.https.IdleTimeout = handler(h), b.cfg.HTTPS.ReadHeaderTimeout(), 2*time.Minute
		fe.https.ErrorLog = slog.NewLogLogger(b.log.Handler(), slog.LevelDebug)
		fe.https.ConnState = func(c net.Conn, st http.ConnState) { b.connStates(c, st); conns.ConnState(c, st) }
		if !b.cfg.HTTPS.PlainHTTP {
			fe.https.TLSConfig = b.httpsTLS(tc)
		}
		if !b.cfg.HTTPS.HTTP2 {
			fe.https.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // HTTP/1.1 only
		}
	}
	return nil
}

// openAccessLog opens [server] access_log behind the switch the
// frontends write to, which a reload may change.
func (b *Box) openAccessLog() (accesslog.Sink, error) {
	b.access = &accessSwitch{}
	b.closers = append(b.closers, b.access.Close)
	l, err := b.openAccessLogAt(b.cfg.Server.AccessLog, b.cfg.Server.AccessLogFormat)
	if err != nil {
		return nil, err
	}
	b.access.swap(l)
	return b.access, nil
}

// openAccessLogAt opens an access log at dest ("" : none, nil).
func (b *Box) openAccessLogAt(dest, format string) (*accesslog.Log, error) {
	if dest == "" {
		return nil, nil
	}
	log := b.log.With("component", "access_log")
	l, err := accesslog.Open(dest, format, func(err error) {
		log.Error("cannot write the access log", "err", err)
	})
	if err != nil {
		return nil, fmt.Errorf("server.access_log: %w", err)
	}
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

// serve starts the set's servers under g; what names it in the log.
func (fe *frontends) serve(g *errgroup.Group, log *slog.Logger, what string) {
	if fe.root != nil {
		log.Info("serving "+what+"root://", "addr", fe.rootLn.Addr().String())
		g.Go(func() error { return fe.root.Serve(fe.rootLn) })
	}
	if fe.https != nil {
		scheme := "https"
		if fe.https.TLSConfig == nil {
			scheme = "http"
		}
		log.Info("serving "+what+scheme+"://", "addr", fe.httpsLn.Addr().String())
		g.Go(func() error {
			var err error
			if fe.https.TLSConfig != nil {
				err = fe.https.ServeTLS(fe.httpsLn, "", "")
			} else {
				err = fe.https.Serve(fe.httpsLn)
			}
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		})
	}
}

// drainers are the set's graceful stops, each bounded by its context;
// root:// clients asking for something new are sent to drainTo
// (host:port), or told to wait when it is "".
func (fe *frontends) drainers(log *slog.Logger, drainTo string) []func(context.Context) error {
	var out []func(context.Context) error
	if fe.root != nil {
		out = append(out, func(ctx context.Context) error { return fe.root.DrainVia(ctx, drainTo) })
	}
	if fe.https != nil {
		out = append(out, func(ctx context.Context) error {
			if err := fe.https.Shutdown(ctx); err != nil {
				log.Warn("drain time over; closing the https requests still running", "err", err)
				return fe.https.Close()
			}
			return nil
		})
	}
	return out
}

// close closes the set's listeners (safe on a set partly built).
func (fe *frontends) close() {
	for _, ln := range []net.Listener{fe.rootLn, fe.httpsLn} {
		if ln != nil {
			ln.Close()
		}
	}
}
