package box

import (
	"context"
	"net/http"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/fleet"
)

// A box may run a director beside its own origin and cache (the site
// box: one process, one config). The director then listens on ports of
// its own ([director] root_addr, https_addr) while the data roles keep
// [root] and [https]: the director redirects clients to the data
// listeners, which serve and never route, so a redirect cannot lead back
// to the director. The data roles advertise to the director in process,
// with the ads they would send over the network, and the director
// reports them upstream among its servers below.

// directorEndpoints are the endpoints of the director: its own listeners
// ([director] root_url, https_url, else the listeners), or the box's
// when it shares them.
func (b *Box) directorEndpoints() (root, https string) {
	if b.dir == nil {
		return b.publicEndpoints()
	}
	return b.dir.public(b.cfg.Director.RootURL, b.cfg.Director.HTTPSURL)
}

// directorHandler is the director's https:// listener: its API, the CA,
// the probe target, then the directed namespace.
func (b *Box) directorHandler(ns http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+fleet.ProbePath, fleet.NewProbeHandler())
	b.withDirectorAPI(mux)
	mux.Handle("/", ns)
	return namespaceFirst(mux, ns) // nsmux.go
}

// withDirectorAPI mounts the director's API (advertisements, federation,
// matrix) and, for a CA director, the CA file.
func (b *Box) withDirectorAPI(mux *http.ServeMux) {
	mux.Handle(director.APIPrefix, b.director.Handler())
	if b.cfg.Director.CA {
		mux.Handle("GET "+director.CAPath, director.CAHandler(b.cfg.Server.StateDir))
	}
}

// localAds is the role that advertises the box's origin and cache to its
// own director, without the network: the director trusts what its own
// process says, so nothing is signed or approved.
func (b *Box) localAds() role {
	// As often as [advertise] interval says, defaults applied or not.
	interval := fleet.DefaultAdInterval
	if d := b.cfg.Advertise.Interval.D(); d > 0 {
		interval = d
	}
	log := b.log.With("component", "director")
	return roleFuncs{run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		failed := ""
		for {
			for _, ad := range b.dataAds(interval) {
				if err := b.director.Advertise(ad); err != nil && err.Error() != failed {
					failed = err.Error()
					log.Error("the box's own server cannot join its director", "name", ad.Name, "err", err)
				}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	}}
}
