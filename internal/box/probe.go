package box

import (
	"fmt"
	"net/http"
	"time"

	"sitebox/internal/fleet"
	"sitebox/internal/units"
)

// newProber reads [probe]: nil when the box does not probe (no interval,
// or no directors to learn the fleet from).
func (b *Box) newProber(dirs *http.Client) (*fleet.Prober, error) {
	pc := b.cfg.Probe
	if pc.Interval == "" || pc.Interval == "0" || len(b.cfg.Advertise.To) == 0 {
		return nil, nil
	}
	iv, err := time.ParseDuration(pc.Interval)
	if err != nil || iv <= 0 {
		return nil, err
	}
	size := int64(64 << 20)
	if pc.Size != "" {
		if size, err = units.ParseSize(pc.Size); err != nil {
			return nil, fmt.Errorf("probe.size: %w", err)
		}
	}
	return fleet.NewProber(fleet.ProberConfig{Self: b.cfg.Server.Name, Directors: b.cfg.Advertise.To,
		Interval: iv, Size: size, Dirs: dirs, Log: b.log}), nil
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
