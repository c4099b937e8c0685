package config

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"sitebox/internal/store"
)

// Validate returns every problem in c (with defaults applied or not). It
// looks at the disk only to check that named files and directories exist,
// since a missing pool is the most common first-day mistake.
func (c *Config) Validate() []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	switch c.Server.LogFormat {
	case "", "text", "json":
	default:
		add("server.log_format", "%q is not a log format (use \"text\" or \"json\")", c.Server.LogFormat)
	}
	switch c.Server.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		add("server.log_level", "%q is not a log level (use debug, info, warn or error)", c.Server.LogLevel)
	}
	if msg := checkAddr(c.Server.MetricsAddr); msg != "" {
		add("server.metrics_addr", "%s", msg)
	}
	if msg := checkAddr(c.Root.Addr); msg != "" {
		add("root.addr", "%s", msg)
	}
	if msg := checkAddr(c.HTTPS.Addr); msg != "" {
		add("https.addr", "%s", msg)
	}
	if (c.HTTPS.Cert == "") != (c.HTTPS.Key == "") {
		add("https.cert", "cert and key must be given together (or neither, for a generated self-signed certificate)")
	}
	for _, f := range []struct{ key, path string }{{"https.cert", c.HTTPS.Cert}, {"https.key", c.HTTPS.Key}} {
		if f.path != "" {
			if _, err := os.Stat(f.path); err != nil {
				add(f.key, "cannot read %s: %v", f.path, unwrapPath(err))
			}
		}
	}
	ps = append(ps, c.validateLimits()...)
	ps = append(ps, c.validateExports()...)
	ps = append(ps, c.Cache.validate(c.Exports)...)
	ps = append(ps, c.Director.validate()...)
	ps = append(ps, c.Advertise.validate()...)
	ps = append(ps, c.Auth.validate()...)
	ps = append(ps, c.Jobs.validate(c.Server.StateDir)...)
	ps = append(ps, c.Probe.validate()...)
	if len(c.Exports) == 0 && !c.Cache.Enabled() && !c.Director.Enabled && !c.Jobs.Enabled {
		ps = append(ps, Problem{Msg: "nothing to serve: add at least one [[export]] (or --export PREFIX=DIR), [[cache.route]] (or --cache PREFIX=URL), [director] enabled = true or [jobs] enabled = true"})
	}
	if c.Jobs.Enabled && !c.Auth.Enabled() && !c.Auth.Kerberos.Enabled() {
		ps = append(ps, Problem{Key: "jobs.enabled", Msg: "the job router needs tokens to know who submits: add [[auth.issuer]], [auth] site_issuer = true or [auth.kerberos]"})
	}
	if c.Jobs.Enabled && c.HTTPS.Addr == Off {
		ps = append(ps, Problem{Key: "jobs.enabled", Msg: "the submit API is served over https://: [https] addr must not be \"off\""})
	}
	if c.Director.Enabled && (len(c.Exports) > 0 || c.Cache.Enabled()) {
		ps = append(ps, Problem{Key: "director.enabled", Msg: "a director serves no data of its own: run exports and cache routes in another box that advertises to it"})
	}
	return ps
}

func (c *Config) validateExports() []Problem {
	var ps []Problem
	seen := map[string]int{}
	for i, e := range c.Exports {
		key := fmt.Sprintf("export[%d]", i+1)
		add := func(sub, format string, args ...any) {
			ps = append(ps, Problem{Key: key + sub, Msg: fmt.Sprintf(format, args...)})
		}
		clean, err := store.CleanPath(e.Prefix)
		switch {
		case e.Prefix == "":
			add(".prefix", "missing: the namespace path this export serves, e.g. \"/store\"")
		case err != nil || !strings.HasPrefix(e.Prefix, "/"):
			add(".prefix", "%q must be an absolute namespace path without '..'", e.Prefix)
		case clean != e.Prefix:
			add(".prefix", "%q should be written %q", e.Prefix, clean)
		}
		if j, dup := seen[clean]; dup && clean != "" {
			add(".prefix", "%q is already exported by export[%d]", clean, j)
		}
		seen[clean] = i + 1
		if len(e.Pools) == 0 {
			add(".pools", "missing: at least one storage directory")
		}
		for _, dir := range e.Pools {
			if !strings.HasPrefix(dir, "/") {
				add(".pools", "%q must be an absolute directory", dir)
				continue
			}
			fi, err := os.Stat(dir)
			switch {
			case err != nil:
				add(".pools", "pool %s: %v", dir, unwrapPath(err))
			case !fi.IsDir():
				add(".pools", "pool %s is not a directory", dir)
			}
		}
	}
	return ps
}

// checkAddr explains what is wrong with a listen address, or returns "".
func checkAddr(addr string) string {
	if addr == "" || addr == Off {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("%q is not host:port (e.g. \"0.0.0.0:1094\" or \":1094\"; \"off\" disables)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("port %q in %q is not a number from 0 to 65535", port, addr)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		if _, err := net.LookupHost(host); err != nil {
			return fmt.Sprintf("host %q in %q does not resolve", host, addr)
		}
	}
	return ""
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
