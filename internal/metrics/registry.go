// Package metrics exposes sitebox's state to Prometheus. Each role gets a
// collector built from a func that returns a snapshot of its stats, so the
// roles themselves never import Prometheus and every scrape reads one
// consistent snapshot.
package metrics

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every sitebox metric name.
const Namespace = "sitebox"

// NewRegistry returns a registry with the Go runtime and process collectors;
// the box registers one collector per configured role on top. A private
// registry (never prometheus.DefaultRegisterer) keeps tests and several
// boxes in one process independent.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// Handler serves the registry's metrics in the Prometheus text format at
// GET /metrics and nothing else, for the admin socket and for a plain TCP
// listener such as [server] metrics_addr.
func Handler(reg prometheus.Gatherer, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: logAdapter{log.With("component", "metrics")},
		// One failing collector should not hide all the others.
		ErrorHandling: promhttp.ContinueOnError,
	})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	return mux
}

// logAdapter lets promhttp report gathering errors through slog.
type logAdapter struct{ log *slog.Logger }

func (l logAdapter) Println(v ...any) { l.log.Warn("gathering metrics", "error", fmt.Sprint(v...)) }
