package config

import (
	"fmt"
	"time"
)

// validateLimits checks the [root] and [https] limits and timeouts.
func (c *Config) validateLimits() []Problem {
	var ps []Problem
	for _, l := range []struct {
		key string
		v   int
	}{
		{"root.max_sessions", c.Root.MaxSessions},
		{"root.max_sessions_per_client", c.Root.MaxSessionsPerClient},
		{"root.max_sessions_per_network", c.Root.MaxSessionsPerNetwork},
		{"root.max_open_files", c.Root.MaxOpenFiles},
		{"root.max_open_files_per_client", c.Root.MaxOpenFilesPerClient},
		{"root.max_open_files_per_network", c.Root.MaxOpenFilesPerNetwork},
		{"root.max_open_files_per_session", c.Root.MaxOpenFilesPerSession},
		{"https.max_conns_per_client", c.HTTPS.MaxConnsPerClient},
		{"https.max_conns_per_network", c.HTTPS.MaxConnsPerNetwork},
	} {
		if l.v < -1 {
			ps = append(ps, Problem{Key: l.key, Msg: fmt.Sprintf("%d is not a limit (a positive number; 0 for the default, -1 for none)", l.v)})
		}
	}
	if v := c.Root.MaxSubstreamsPerSession; v < -1 || v > 15 {
		ps = append(ps, Problem{Key: "root.max_substreams_per_session", Msg: fmt.Sprintf("%d is not a limit (1 to 15, the protocol's most; 0 for the default 15)", v)})
	}
	for _, d := range []struct{ key, v string }{
		{"root.request_timeout", c.Root.RequestTimeout},
		{"root.write_timeout", c.Root.WriteTimeout},
		{"root.idle_timeout", c.Root.IdleTimeout},
		{"https.header_timeout", c.HTTPS.HeaderTimeout},
		{"https.body_timeout", c.HTTPS.BodyTimeout},
	} {
		if d.v == "" {
			continue
		}
		if dur, err := time.ParseDuration(d.v); err != nil || dur < time.Second {
			ps = append(ps, Problem{Key: d.key, Msg: fmt.Sprintf("%q is not a duration of at least 1s (e.g. \"1m\")", d.v)})
		}
	}
	return ps
}
