// Package config is sitebox's single TOML configuration file: its types,
// defaults and validation. Validation names every problem with the line it
// is on, so an operator can fix a file in one pass.
package config

import (
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/cksum"
	"sitebox/internal/director"
	"sitebox/internal/jobs"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// Config is the whole file. The zero value plus Defaults is a box that
// serves nothing; at least one role must be configured to serve.
type Config struct {
	Server    Server             `toml:"server"`
	Root      xrdserver.Settings `toml:"root"`
	HTTPS     webdav.Settings    `toml:"https"`
	Exports   origin.Exports     `toml:"export"`
	Cache     cache.Settings     `toml:"cache"`
	Director  director.Settings  `toml:"director"`
	Advertise Advertise          `toml:"advertise"`
	Auth      auth.Settings      `toml:"auth"`
	Jobs      jobs.Config        `toml:"jobs"`
	Probe     Probe              `toml:"probe"`
	TPC       TPC                `toml:"tpc"`
}

// Server holds settings shared by every role.
type Server struct {
	// Name identifies the box in logs and to directors (default: hostname).
	Name string `toml:"name"`
	// Site is the site the box belongs to, e.g. "UNIGE".
	Site string `toml:"site"`
	// StateDir keeps generated certificates and other state
	// (default /var/lib/sitebox, or ./sitebox-state when not root).
	StateDir string `toml:"state_dir"`
	// LogFormat is "text" (default) or "json".
	LogFormat string `toml:"log_format"`
	// LogLevel is "debug", "info" (default), "warn" or "error".
	LogLevel string `toml:"log_level"`
	// MetricsAddr serves Prometheus metrics over plain HTTP at /metrics,
	// e.g. "127.0.0.1:9101"; "off" (default) serves them only on the admin
	// socket in StateDir.
	MetricsAddr string `toml:"metrics_addr"`
	// Dashboard serves the web dashboard at /.sitebox/dashboard/ on the
	// https port (default true). It shows no data, only transfer figures,
	// but its top users are token subjects: set false where those are
	// private.
	Dashboard *bool `toml:"dashboard"`
	// DrainTime bounds a graceful stop (SIGTERM): running transfers may
	// finish for this long while new requests are sent elsewhere (default
	// "25s", inside the packaged unit's TimeoutStopSec=30).
	DrainTime string `toml:"drain_time"`
	// AccessLog writes one line per transfer (a root:// file from open to
	// close, an https GET or PUT): time, protocol, client, issuer,
	// subject, VO, path, bytes, duration, result. A file path (opened for
	// appending and reopened when logrotate moves it) or "stderr"; unset:
	// no access log.
	AccessLog string `toml:"access_log"`
	// AccessLogFormat is "text" (default: key=value) or "json".
	AccessLogFormat string `toml:"access_log_format"`
	// Checksums names the checksum algorithms offered besides adler32 and
	// crc32c, which every box computes: ["md5"] serves md5 on root://
	// (query checksum, xrdcp --cksum md5) and https:// (Want-Digest: md5),
	// through a cache too. md5 costs a read of the whole file at a few
	// hundred MB/s per core the first time it is asked for each version
	// of a file, like xrootd's xrootd.chksum md5.
	Checksums []string `toml:"checksums"`
}

// Offered is the checksum algorithms the box offers; Validate has
// checked the names.
func (s *Server) Offered() cksum.Offered {
	o, _ := cksum.NewOffered(s.Checksums)
	return o
}

// DashboardEnabled reports whether the dashboard is served.
func (s *Server) DashboardEnabled() bool { return s.Dashboard == nil || *s.Dashboard }

// Duration is a duration setting's value, 0 when unset (the component's
// default applies). Validate has checked it parses.
func Duration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// Off is the address value that disables a listener.
const Off = "off"

// ApplyDefaults fills unset fields with their documented defaults.
func (c *Config) ApplyDefaults(hostname string, isRoot bool) {
	if c.Server.Name == "" {
		c.Server.Name = hostname
	}
	if c.Server.StateDir == "" {
		c.Server.StateDir = "./sitebox-state"
		if isRoot {
			c.Server.StateDir = "/var/lib/sitebox"
		}
	}
	if c.Server.LogFormat == "" {
		c.Server.LogFormat = "text"
	}
	if c.Server.LogLevel == "" {
		c.Server.LogLevel = "info"
	}
	if c.Server.MetricsAddr == "" {
		c.Server.MetricsAddr = Off
	}
	if c.Server.DrainTime == "" {
		c.Server.DrainTime = "25s"
	}
	c.Root.Defaults()
	c.HTTPS.Defaults()
	c.Cache.Defaults()
	c.Director.Defaults()
	c.Advertise.applyDefaults()
	c.TPC.applyDefaults()
	c.Auth.Defaults()
	c.Jobs.Defaults(c.Server.StateDir)
}
