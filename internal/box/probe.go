package box

import (
	"net/http"

	"sitebox/internal/fleet"
)

// newProber reads [probe]: nil when the box does not probe (no interval,
// or no directors to learn the fleet from).
func (b *Box) newProber(dirs *http.Client) *fleet.Prober {
	pc := b.cfg.Probe
	if pc.Interval <= 0 || len(b.cfg.Advertise.To) == 0 {
		return nil
	}
	pc.Defaults()
	return fleet.NewProber(fleet.ProberConfig{Self: b.cfg.Server.Name, Directors: b.cfg.Advertise.To,
		Interval: pc.Interval.D(), Size: pc.Size.Bytes(), Dirs: dirs, Log: b.log})
}

// currentDowntime is the planned downtime to advertise (see
// fleet.CurrentDowntime); a file that cannot be read is logged.
func (b *Box) currentDowntime() *fleet.Downtime {
	d, err := fleet.CurrentDowntime(b.cfg.Server.StateDir)
	if err != nil {
		b.log.Warn("cannot read planned downtimes", "err", err)
	}
	return d
}
