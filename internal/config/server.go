package config

import (
	"path/filepath"
	"time"

	"sitebox/internal/cksum"
	"sitebox/internal/problem"
	"sitebox/internal/units"
)

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
	DrainTime units.Duration `toml:"drain_time"`
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

// DefaultDrainTime is [server] drain_time's default, inside the
// packaged unit's TimeoutStopSec=30.
const DefaultDrainTime = 25 * time.Second

// Defaults fills unset fields with their documented defaults; the box's
// name defaults to hostname, its state dir to a system one for root.
func (s *Server) Defaults(hostname string, isRoot bool) {
	if s.Name == "" {
		s.Name = hostname
	}
	if s.StateDir == "" {
		s.StateDir = "./sitebox-state"
		if isRoot {
			s.StateDir = "/var/lib/sitebox"
		}
	}
	if s.LogFormat == "" {
		s.LogFormat = "text"
	}
	if s.LogLevel == "" {
		s.LogLevel = "info"
	}
	if s.MetricsAddr == "" {
		s.MetricsAddr = Off
	}
	if s.DrainTime == 0 {
		s.DrainTime = units.Duration(DefaultDrainTime)
	}
}

// Validate returns every problem in s, keyed as in the file
// ("server.drain_time").
func (s *Server) Validate() []Problem {
	l := &problem.List{Section: "server"}
	add := l.Add
	switch s.LogFormat {
	case "", "text", "json":
	default:
		add("log_format", "%q is not a log format (use \"text\" or \"json\")", s.LogFormat)
	}
	switch s.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		add("log_level", "%q is not a log level (use debug, info, warn or error)", s.LogLevel)
	}
	if s.DrainTime < 0 {
		add("drain_time", "%q is not a duration of 0 or more (e.g. \"25s\")", s.DrainTime)
	}
	switch s.AccessLogFormat {
	case "", "text", "json":
	default:
		add("access_log_format", "%q is not an access log format (use \"text\" or \"json\")", s.AccessLogFormat)
	}
	if p := s.AccessLog; p != "" && p != "stderr" && !filepath.IsAbs(p) {
		add("access_log", "%q: give an absolute file path or \"stderr\"", p)
	}
	if _, err := cksum.NewOffered(s.Checksums); err != nil {
		add("checksums", "%v", err)
	}
	if msg := problem.CheckAddr(s.MetricsAddr); msg != "" {
		add("metrics_addr", "%s", msg)
	}
	return l.All
}
