// Package box assembles the roles a config asks for — origin, cache,
// director and job router, side by side in one process — behind the
// root:// and https:// frontends, and runs them until the context ends.
package box

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"sitebox/internal/admin"
	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/fleet"
	"sitebox/internal/jobs"
	"sitebox/internal/krb5auth"
	"sitebox/internal/metrics"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
	"sitebox/internal/web"
	"sitebox/internal/webdav"
	"sitebox/internal/xrootd/gsi"
)

// Box is a running set of roles and listeners.
type Box struct {
	cfg        *config.Config
	log        *slog.Logger
	store      store.Store
	cache      *cache.Cache
	director   *director.Director
	advertiser *fleet.Advertiser[director.Ad]
	holdings   *holdingsRole // the origin's holdings filter, for its ads; nil without one
	sendHold   director.HoldingsSender
	upstream   upstreamWatch // the cache's upstream errors, for the dashboard
	policy     *auth.Policy
	tokens     *tokenSwitch // nil without [auth] issuers
	// authn is the one entry point of credentials: the frontends, the
	// job API and the dashboard hand it what clients present.
	authn     *auth.Authenticator
	access    *accessSwitch // the access log, which a reload may change
	issuer    *auth.Issuer  // the site issuer, when this box is one
	jobs      *jobs.Service // the job router, when [jobs] is enabled
	registry  *prometheus.Registry
	digest    atomic.Pointer[string] // of the config in force, advertised (a reload changes it)
	prober    *fleet.Prober
	transfers *metrics.Transfers
	copies    *tpc.Budget    // the memory of every copy's buffers, whichever frontend runs it
	dirRates  *web.Recorder  // the director's decisions over time, for the dashboard
	parts     []role         // started by Run
	closers   []func() error // in the order to undo: the last first

	// data serves the box's namespace on [root] and [https]; dir, when
	// the director shares the box with data roles, serves the director
	// on its own listeners over dirStore.
	data     frontends
	dir      *frontends
	dirStore store.Store

	admin     *admin.Server
	adminLn   net.Listener
	metricsLn net.Listener // nil unless [server] metrics_addr is set
	metrics   *http.Server

	// current is the config last applied (at start or by Reload), which
	// the next reload is compared with; reloadMu orders reloads.
	current  *config.Config
	reloadMu sync.Mutex

	// krb5 takes Kerberos tickets; nil without [auth.kerberos].
	krb5 *krb5auth.Authenticator
	// x509 takes grid credentials (proxies, VOMS); nil without
	// [auth.x509].
	x509 *auth.X509
	// certs verifies https clients' certificates with x509, once per
	// connection; nil without [auth.x509].
	certs *webdav.ClientCerts
	// gsi answers XRootD's gsi protocol on root://; nil without
	// [auth.x509] or without a host certificate it can use (gsi.go).
	gsi *gsi.Server
	// outbound are the box's own X.509 proxies toward upstreams
	// (gridproxy.go).
	outbound gridOutbound
}

// New builds the roles and binds the listeners, so that address problems
// surface before Run and the bound addresses (port 0 resolved) are known.
func New(cfg *config.Config, log *slog.Logger) (_ *Box, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Box{cfg: cfg, current: cfg, log: log}
	b.setDigest(cfg)
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
	b.buildAuthenticator()
	if err = b.buildX509(); err != nil {
		return nil, err
	}
	b.buildGSI()
	if err = b.buildOutbound(); err != nil {
		return nil, err
	}
	if b.store, err = b.buildStores(); err != nil {
		return nil, err
	}
	b.store = b.guard(b.store)
	if err = b.buildJobs(); err != nil {
		return nil, err
	}
	if err = b.refuseJobReadable(); err != nil {
		return nil, err
	}
	b.copies = tpc.NewBudget(cfg.TPC.BufferBytes(hostMemory()))
	if err = b.buildOps(); err != nil {
		return nil, err
	}
	if err = b.buildFrontends(); err != nil {
		return nil, err
	}
	if b.dirStore != nil {
		b.add(b.localAds())
	}
	if b.director != nil {
		root, _ := b.directorEndpoints()
		b.director.SetRoot(root)
	}
	if b.advertiser, err = b.newAdvertiser(); err != nil {
		return nil, err
	}
	return b, nil
}

// RootAddr is the bound root:// address, or nil when disabled.
func (b *Box) RootAddr() net.Addr { return addrOf(b.data.rootLn) }

// HTTPSAddr is the bound https:// address, or nil when disabled.
func (b *Box) HTTPSAddr() net.Addr { return addrOf(b.data.httpsLn) }

// DirectorAddrs are the bound addresses of the director's own listeners
// (nil when it has none, or shares [root] and [https]).
func (b *Box) DirectorAddrs() (root, https net.Addr) {
	if b.dir == nil {
		return nil, nil
	}
	return addrOf(b.dir.rootLn), addrOf(b.dir.httpsLn)
}

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
	b.data.serve(g, b.log, "")
	if b.dir != nil {
		b.dir.serve(g, b.log, "director ")
	}
	b.runParts(ctx, g)
	b.runOps(g)
	if b.advertiser != nil {
		g.Go(func() error { return b.advertiser.Run(ctx) })
	}
	if b.jobs != nil {
		g.Go(func() error { return b.jobs.Run(ctx) })
	}
	if b.prober != nil {
		g.Go(func() error { return b.prober.Run(ctx) })
	}
	g.Go(func() error {
		<-ctx.Done()
		return b.drain()
	})
	err := g.Wait()
	b.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// drain stops the frontends gracefully: both stop accepting at once,
// running transfers may finish within [server] drain_time (root://
// clients asking for something new are sent elsewhere, https requests
// in progress complete), then what is left is cut.
func (b *Box) drain() error {
	budget := b.cfg.Server.DrainTime.D()
	if budget <= 0 {
		budget = config.DefaultDrainTime
	}
	start := time.Now()
	b.log.Info("stopping: draining transfers", "drain_time", budget)
	sctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	stop := func(f func(context.Context) error) {
		wg.Go(func() {
			err := f(sctx)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	to := b.drainTo()
	if to != "" {
		b.log.Info("draining: root:// clients asking for something new go to the director", "to", to)
	}
	for _, f := range b.data.drainers(b.log, to) {
		stop(f)
	}
	if b.dir != nil {
		for _, f := range b.dir.drainers(b.log, to) {
			stop(f)
		}
	}
	wg.Wait()
	// The operator side (admin socket, metrics) goes last, quickly.
	octx, ocancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer ocancel()
	errs = append(errs, b.shutdownOps(octx))
	b.log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
	return errors.Join(errs...)
}

// drainTo is where draining root:// listeners send new requests:
// [root] drain_redirect, else the root:// address the director this box
// advertises to gave in its answers, else nowhere ("": clients wait).
func (b *Box) drainTo() string {
	if to := b.cfg.Root.DrainTo(); to != "" {
		return to
	}
	if b.advertiser != nil {
		return b.advertiser.DirectorRoot()
	}
	return ""
}

// Close releases listeners and roles; safe after a partial New.
func (b *Box) Close() error {
	b.data.close()
	if b.dir != nil {
		b.dir.close()
	}
	for _, ln := range []net.Listener{b.adminLn, b.metricsLn} {
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
