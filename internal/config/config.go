// Package config is sitebox's single TOML configuration file: its types,
// defaults and validation. Validation names every problem with the line it
// is on, so an operator can fix a file in one pass.
package config

import (
	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/director"
	"sitebox/internal/fleet"
	"sitebox/internal/jobs"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// Config is the whole file. The zero value plus Defaults is a box that
// serves nothing; at least one role must be configured to serve.
type Config struct {
	Server    Server                  `toml:"server"`
	Root      xrdserver.Settings      `toml:"root"`
	HTTPS     webdav.Settings         `toml:"https"`
	Exports   origin.Exports          `toml:"export"`
	Cache     cache.Settings          `toml:"cache"`
	Director  director.Settings       `toml:"director"`
	Advertise fleet.AdvertiseSettings `toml:"advertise"`
	Auth      auth.Settings           `toml:"auth"`
	Jobs      jobs.Settings           `toml:"jobs"`
	Probe     fleet.ProbeSettings     `toml:"probe"`
	TPC       TPC                     `toml:"tpc"`
}

// Off is the address value that disables a listener.
const Off = "off"

// ApplyDefaults fills unset fields with their documented defaults.
func (c *Config) ApplyDefaults(hostname string, isRoot bool) {
	c.Server.Defaults(hostname, isRoot)
	c.Root.Defaults()
	c.HTTPS.Defaults()
	c.Cache.Defaults()
	c.Director.Defaults()
	c.Advertise.Defaults()
	c.Probe.Defaults()
	c.TPC.applyDefaults()
	c.Auth.Defaults()
	c.Jobs.Defaults(c.Server.StateDir)
}
