// Package box assembles the roles a config asks for — today the origin
// behind the root:// and https:// frontends — and runs them until the
// context ends.
package box

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"sitebox/internal/admin"
	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/jobs"
	"sitebox/internal/krb5auth"
	"sitebox/internal/metrics"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// Box is a running set of roles and listeners.
type Box struct {
	cfg        *config.Config
	log        *slog.Logger
	store      store.Store
	cache      *cache.Cache
	director   *director.Director
	advertiser *director.Advertiser
	policy     *auth.Policy
	tokens     *auth.Verifier // nil without [auth] issuers
	issuer     *auth.Issuer   // the site issuer, when this box is one
	jobs       *jobs.Service  // the job router, when [jobs] is enabled
	registry   *prometheus.Registry
	digest     string // of the config, advertised
	prober     *prober
	transfers  *metrics.Transfers
	closers    []func() error

	rootLn  net.Listener
	httpsLn net.Listener
	root    *xrdserver.Server
	https   *http.Server

	admin     *admin.Server
	adminLn   net.Listener
	metricsLn net.Listener // nil unless [server] metrics_addr is set
	metrics   *http.Server

	// krb5 takes Kerberos tickets; nil without [auth.kerberos].
	krb5 *krb5auth.Authenticator
}

// New builds the roles and binds the listeners, so that address problems
// surface before Run and the bound addresses (port 0 resolved) are known.
func New(cfg *config.Config, log *slog.Logger) (_ *Box, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Box{cfg: cfg, log: log, digest: configDigest(cfg)}
	defer func() {
		if err != nil {
			b.Close() // what was built before the failure
		}
	}()
	if err = b.buildAuth(); err != nil {
		return nil, err
	}
	if err = b.buildKerberos(); err != nil {
		return nil, err
	}
	if b.store, err = b.buildStores(); err != nil {
		return nil, err
	}
	b.store = b.guard(b.store)
	if err = b.buildJobs(); err != nil {
		return nil, err
	}
	if err = b.buildOps(); err != nil {
		return nil, err
	}
	var tc *tls.Config
	if cfg.Root.Addr != config.Off && cfg.Root.TLSEnabled() || cfg.HTTPS.Addr != config.Off && !cfg.HTTPS.PlainHTTP {
		if tc, err = b.serverTLS(); err != nil {
			return nil, err
		}
	}

	if cfg.Root.Addr != config.Off {
		if b.rootLn, err = net.Listen("tcp", cfg.Root.Addr); err != nil {
			return nil, fmt.Errorf("root:// listener: %w", err)
		}
		rc := xrdserver.Config{ServerName: cfg.Server.Name, Manager: b.director != nil, Observer: b.transfers,
			RequestTimeout: config.Duration(cfg.Root.RequestTimeout), WriteTimeout: config.Duration(cfg.Root.WriteTimeout),
			Limits: xrdserver.Limits{Sessions: cfg.Root.MaxSessions, SessionsPerClient: cfg.Root.MaxSessionsPerClient,
				OpenFiles: cfg.Root.MaxOpenFiles, OpenFilesPerClient: cfg.Root.MaxOpenFilesPerClient, OpenFilesPerSession: cfg.Root.MaxOpenFilesPerSession}}
		if cfg.Root.TLSEnabled() {
			rc.TLS = tc
		}
		if b.tokens != nil {
			rc.Tokens = b.tokens
		}
		b.withKerberos(&rc, nil)
		b.root = xrdserver.New(rc, b.store, log.With("component", "root"))
	}
	if cfg.HTTPS.Addr != config.Off {
		if b.httpsLn, err = net.Listen("tcp", cfg.HTTPS.Addr); err != nil {
			return nil, fmt.Errorf("https:// listener: %w", err)
		}
		wc := webdav.Config{ServerName: cfg.Server.Name, Observer: b.transfers, BodyTimeout: config.Duration(cfg.HTTPS.BodyTimeout)}
		if b.tokens != nil {
			wc.Tokens = b.tokens
		}
		b.withKerberos(nil, &wc)
		h := webdav.New(wc, b.store, log.With("component", "https"))
		b.httpsLn = webdav.LimitListener(b.httpsLn, connsPerClient(cfg.HTTPS.MaxConnsPerClient), log.With("component", "https"))
		headerTimeout := config.Duration(cfg.HTTPS.HeaderTimeout)
		if headerTimeout == 0 {
			headerTimeout = 30 * time.Second
		}
		// No ReadTimeout or WriteTimeout: transfers take as long as they
		// keep moving. Headers have HeaderTimeout, upload bodies the
		// handler's BodyTimeout on progress, and an idle keep-alive
		// connection is closed after IdleTimeout.
		b.https = &http.Server{Handler: b.httpsHandler(h), ReadHeaderTimeout: headerTimeout, IdleTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug), ConnState: b.connStates}
		if !cfg.HTTPS.PlainHTTP {
			b.https.TLSConfig = tc
		}
		if !cfg.HTTPS.HTTP2 {
			b.https.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // HTTP/1.1 only
		}
	}
	if b.advertiser, err = b.newAdvertiser(); err != nil {
		return nil, err
	}
	return b, nil
}

// connsPerClient is [https] max_conns_per_client with its default (512, as
// root://'s sessions per client); -1 means no limit.
func connsPerClient(n int) int {
	switch {
	case n == 0:
		return 512
	case n < 0:
		return 0
	}
	return n
}

// serverTLS is the box's certificate for https:// and roots://: the
// configured one, or a self-signed one kept in the state dir.
func (b *Box) serverTLS() (*tls.Config, error) {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if hn, err := os.Hostname(); err == nil {
		hosts = append(hosts, hn)
	}
	tc, err := tlsutil.LoadOrCreate(b.cfg.HTTPS.Cert, b.cfg.HTTPS.Key, filepath.Join(b.cfg.Server.StateDir, "tls"), hosts)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	return tc, nil
}

// RootAddr is the bound root:// address, or nil when disabled.
func (b *Box) RootAddr() net.Addr { return addrOf(b.rootLn) }

// HTTPSAddr is the bound https:// address, or nil when disabled.
func (b *Box) HTTPSAddr() net.Addr { return addrOf(b.httpsLn) }

func addrOf(ln net.Listener) net.Addr {
	if ln == nil {
		return nil
	}
	return ln.Addr()
}

// Run serves until ctx ends, then shuts every listener down gracefully
// (bounded by a grace period) and releases the roles.
func (b *Box) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	if b.root != nil {
		b.log.Info("serving root://", "addr", b.rootLn.Addr().String())
		g.Go(func() error { return b.root.Serve(b.rootLn) })
	}
	if b.https != nil {
		scheme := "https"
		if b.https.TLSConfig == nil {
			scheme = "http"
		}
		b.log.Info("serving "+scheme+"://", "addr", b.httpsLn.Addr().String())
		g.Go(func() error {
			var err error
			if b.https.TLSConfig != nil {
				err = b.https.ServeTLS(b.httpsLn, "", "")
			} else {
				err = b.https.Serve(b.httpsLn)
			}
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		})
	}
	b.runOps(g)
	if b.advertiser != nil {
		g.Go(func() error { return b.advertiser.Run(ctx) })
	}
	if b.jobs != nil {
		g.Go(func() error { return b.jobs.Run(ctx) })
	}
	if b.prober != nil {
		g.Go(func() error { return b.prober.run(ctx) })
	}
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var errs []error
		if b.root != nil {
			errs = append(errs, b.root.Shutdown(sctx))
		}
		if b.https != nil {
			errs = append(errs, b.https.Shutdown(sctx))
		}
		errs = append(errs, b.shutdownOps(sctx))
		return errors.Join(errs...)
	})
	err := g.Wait()
	b.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Close releases listeners and roles; safe after a partial New.
func (b *Box) Close() error {
	for _, ln := range []net.Listener{b.rootLn, b.httpsLn, b.adminLn, b.metricsLn} {
		if ln != nil {
			ln.Close()
		}
	}
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i]())
	}
	b.closers = nil
	return errors.Join(errs...)
}
