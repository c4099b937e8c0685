package box

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/admin"
	"sitebox/internal/config"
	"sitebox/internal/metrics"
)

// buildOps sets up what the operator talks to: the admin socket in the
// state dir (always, so `sitebox cache …` finds a running box) and, when
// configured, a plain-HTTP /metrics listener for Prometheus.
func (b *Box) buildOps() error {
	reg := metrics.NewRegistry()
	b.registry = reg
	if b.cache != nil {
		reg.MustRegister(metrics.NewCacheCollector(b.cache.Stats))
	}
	if b.director != nil {
		reg.MustRegister(metrics.NewDirectorCollector(b.director.Stats))
	}
	if b.jobs != nil {
		reg.MustRegister(metrics.NewJobsCollector(b.jobs))
	}
	reg.MustRegister(metrics.NewCopyBufferCollector(b.copies.Stats))
	b.transfers = metrics.NewTransfers(reg, b.namespaces())
	b.admin = admin.New(reg, b.cache, b.log)
	if b.director != nil {
		b.admin.WithRegistry(b.director)
	}
	var err error
	if b.adminLn, err = b.admin.Listen(b.cfg.Server.StateDir); err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if addr := b.cfg.Server.MetricsAddr; addr != "" && addr != config.Off {
		if b.metricsLn, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("metrics listener (server.metrics_addr): %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler(reg, b.log))
		b.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(b.log.Handler(), slog.LevelDebug)}
	}
	return nil
}

// namespaces are the prefixes transfers are counted under: exports and
// cached routes.
func (b *Box) namespaces() []string {
	var ns []string
	for _, e := range b.cfg.Exports {
		ns = append(ns, e.Prefix)
	}
	if b.cache != nil {
		ns = append(ns, b.cache.Prefixes()...)
	}
	return ns
}

// connStates counts https connections for the transfer metrics.
func (b *Box) connStates(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		b.transfers.Connections("https", 1)
	case http.StateClosed, http.StateHijacked:
		b.transfers.Connections("https", -1)
	}
}

// MetricsAddr is the bound /metrics address, or nil when disabled.
func (b *Box) MetricsAddr() net.Addr { return addrOf(b.metricsLn) }

func (b *Box) runOps(g *errgroup.Group) {
	ln := b.adminLn
	g.Go(func() error { return b.admin.Serve(ln) })
	if b.metrics != nil {
		b.log.Info("serving metrics", "addr", b.metricsLn.Addr().String())
		g.Go(func() error {
			if err := b.metrics.Serve(b.metricsLn); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
}

func (b *Box) shutdownOps(ctx context.Context) error {
	var errs []error
	if b.metrics != nil {
		errs = append(errs, b.metrics.Shutdown(ctx))
	}
	if b.admin != nil {
		errs = append(errs, b.admin.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
