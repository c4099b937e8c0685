package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sitebox/internal/cache"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"sitebox/internal/box"
	"sitebox/internal/config"
	"sitebox/internal/origin"
)

// serveFlags are the quick-use flags; each overrides the config file.
type serveFlags struct {
	configFile  string
	exports     []string
	tpcAllow    []string
	caches      []string
	cacheDir    string
	cacheRAM    string
	rootAddr    string
	httpsAddr   string
	plainHTTP   bool
	metricsAddr string
	stateDir    string
	name        string
	logFormat   string
	logLevel    string
	accessLog   string
	accessFmt   string
}

func addServeCommand(root *cobra.Command) {
	cmd, _ := newServeCmd()
	root.AddCommand(cmd)
}

func newServeCmd() (*cobra.Command, *serveFlags) {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the box: serve the configured roles over root:// and https://",
		Example: `  sitebox serve --config /etc/sitebox/site.toml
  sitebox serve --export /store=/data/pool1,/data/pool2 --export /pub=/data/pub:ro \
      --root-addr 127.0.0.1:1094 --https-addr 127.0.0.1:8443
  sitebox serve --cache /store=root://origin.example.org:1094,https://backup.example.org:8443 \
      --cache-dir /srv/cache --cache-ram 2GiB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			level := new(slog.LevelVar)
			log := newLogger(cfg.Server.LogFormat, cfg.Server.LogLevel, level)
			if p := os.Getenv("SITEBOX_CPUPROFILE"); p != "" { // for developers
				if f, err := os.Create(p); err == nil {
					pprof.StartCPUProfile(f)
					defer pprof.StopCPUProfile()
				}
			}
			b, err := box.New(cfg, log)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// SIGHUP (systemctl reload) re-reads the config.
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-hup:
						f.reload(cmd, b, level, log)
					}
				}
			}()
			return b.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.configFile, "config", "c", "", "config file (TOML)")
	fl.StringArrayVar(&f.exports, "export", nil, "export PREFIX=DIR[,DIR...][:ro] (repeatable); replaces the file's exports")
	fl.StringArrayVar(&f.tpcAllow, "tpc-allow", nil, `server a third-party copy may reach: "*", "*.domain", host, address or CIDR (repeatable); replaces the file's [tpc] allow`)
	fl.StringArrayVar(&f.caches, "cache", nil, "cache PREFIX=URL[,URL...] through upstreams tried in order (repeatable); replaces the file's routes")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "directory for cached data")
	fl.StringVar(&f.cacheRAM, "cache-ram", "", `RAM for blocks in flight, waiting for the disk, or read ahead and not yet read (default "1GiB")`)
	fl.StringVar(&f.rootAddr, "root-addr", "", `root:// listen address (default ":1094"; "off" disables)`)
	fl.StringVar(&f.httpsAddr, "https-addr", "", `https:// listen address (default ":8443"; "off" disables)`)
	fl.BoolVar(&f.plainHTTP, "http", false, "serve plain HTTP instead of HTTPS")
	fl.StringVar(&f.stateDir, "state-dir", "", "directory for generated certificates, state and the admin socket")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", `Prometheus /metrics listen address over plain HTTP (default "off": admin socket only)`)
	fl.StringVar(&f.name, "name", "", "server name (default: hostname)")
	fl.StringVar(&f.logFormat, "log-format", "", "text or json")
	fl.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error")
	fl.StringVar(&f.accessLog, "access-log", "", `one line per transfer to this file (absolute path) or "stderr"`)
	fl.StringVar(&f.accessFmt, "access-log-format", "", "text or json")
	return cmd, f
}

// load reads the config file (if any), applies flags over it, then defaults,
// and validates the result.
func (f *serveFlags) load(cmd *cobra.Command) (*config.Config, error) {
	cfg := &config.Config{}
	if f.configFile != "" {
		c, _, err := config.Load(f.configFile)
		if err != nil && !onlyValidation(c, err) {
			return nil, err
		}
		// A file that is only incomplete (say, no [[export]]) may be
		// completed by the flags: the whole is validated below.
		cfg = c
	}
	if len(f.exports) > 0 {
		cfg.Exports = nil
		for _, s := range f.exports {
			e, err := parseExportFlag(s)
			if err != nil {
				return nil, err
			}
			cfg.Exports = append(cfg.Exports, e)
		}
	}
	if len(f.tpcAllow) > 0 {
		cfg.TPC.Allow = f.tpcAllow
	}
	if len(f.caches) > 0 {
		cfg.Cache.Routes = nil
		for _, s := range f.caches {
			r, err := parseCacheFlag(s)
			if err != nil {
				return nil, err
			}
			cfg.Cache.Routes = append(cfg.Cache.Routes, r)
		}
	}
	set := func(name string, dst *string, v string) {
		if cmd.Flags().Changed(name) {
			*dst = v
		}
	}
	set("cache-dir", &cfg.Cache.Dir, f.cacheDir)
	if cmd.Flags().Changed("cache-ram") {
		if err := cfg.Cache.RAM.UnmarshalText([]byte(f.cacheRAM)); err != nil {
			return nil, fmt.Errorf("--cache-ram: %w", err)
		}
	}
	set("root-addr", &cfg.Root.Addr, f.rootAddr)
	set("https-addr", &cfg.HTTPS.Addr, f.httpsAddr)
	set("state-dir", &cfg.Server.StateDir, f.stateDir)
	set("metrics-addr", &cfg.Server.MetricsAddr, f.metricsAddr)
	set("name", &cfg.Server.Name, f.name)
	set("log-format", &cfg.Server.LogFormat, f.logFormat)
	set("log-level", &cfg.Server.LogLevel, f.logLevel)
	set("access-log", &cfg.Server.AccessLog, f.accessLog)
	set("access-log-format", &cfg.Server.AccessLogFormat, f.accessFmt)
	if cmd.Flags().Changed("http") {
		cfg.HTTPS.PlainHTTP = f.plainHTTP
	}
	host, _ := os.Hostname()
	cfg.ApplyDefaults(host, os.Geteuid() == 0)
	if ps := cfg.Validate(); len(ps) > 0 {
		name := f.configFile
		if name == "" {
			name = "flags"
		}
		return nil, &config.Problems{File: name, List: ps}
	}
	return cfg, nil
}

// onlyValidation reports whether a config file decoded cleanly and err
// holds only what Validate finds in it — problems flags can still fix —
// rather than unknown settings or values of the wrong type.
func onlyValidation(cfg *config.Config, err error) bool {
	var ps *config.Problems
	if cfg == nil || !errors.As(err, &ps) {
		return false
	}
	return len(ps.List) == len(cfg.Validate())
}

// parseExportFlag reads PREFIX=DIR[,DIR...][:ro].
func parseExportFlag(s string) (origin.Export, error) {
	prefix, dirs, ok := strings.Cut(s, "=")
	if !ok || prefix == "" || dirs == "" {
		return origin.Export{}, fmt.Errorf("--export %q: want PREFIX=DIR[,DIR...][:ro], e.g. /store=/data/pool1", s)
	}
	e := origin.Export{Prefix: prefix}
	if d, found := strings.CutSuffix(dirs, ":ro"); found {
		dirs, e.ReadOnly = d, true
	}
	for _, d := range strings.Split(dirs, ",") {
		if d == "" {
			return origin.Export{}, fmt.Errorf("--export %q: empty pool directory", s)
		}
		e.Pools = append(e.Pools, d)
	}
	return e, nil
}

// parseCacheFlag reads PREFIX=URL[,URL...].
func parseCacheFlag(s string) (cache.RouteEntry, error) {
	prefix, urls, ok := strings.Cut(s, "=")
	if !ok || prefix == "" || urls == "" {
		return cache.RouteEntry{}, fmt.Errorf("--cache %q: want PREFIX=URL[,URL...], e.g. /store=root://origin.example.org:1094", s)
	}
	r := cache.RouteEntry{Prefix: prefix}
	for _, u := range strings.Split(urls, ",") {
		if u == "" {
			return cache.RouteEntry{}, fmt.Errorf("--cache %q: empty upstream URL", s)
		}
		r.Upstreams = append(r.Upstreams, u)
	}
	return r, nil
}

// reload re-reads the config and applies it to the running box, or
// says why not and keeps the box on the config it runs.
func (f *serveFlags) reload(cmd *cobra.Command, b *box.Box, level *slog.LevelVar, log *slog.Logger) {
	name := f.configFile
	if name == "" {
		name = "flags"
	}
	log.Info("reload: reading the config again", "file", name)
	next, err := f.load(cmd)
	if err != nil {
		log.Error("reload refused: the new config does not pass `sitebox config check`; still running on the old one", "file", name, "problems", err.Error())
		return
	}
	changed, err := b.Reload(next)
	if err != nil {
		log.Error("reload refused; still running on the old config", "file", name, "err", err.Error())
		return
	}
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(next.Server.LogLevel))
	level.Set(lv)
	if len(changed) == 0 {
		log.Info("reload: nothing changed", "file", name)
		return
	}
	log.Info("reload: config applied", "file", name, "changed", strings.Join(changed, ", "))
}

// newLogger logs at the level in lv, set from level (a reload changes it).
func newLogger(format, level string, lv *slog.LevelVar) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	lv.Set(l)
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func addConfigCommands(root *cobra.Command) {
	cfgCmd := &cobra.Command{Use: "config", Short: "Work with the config file"}
	cfgCmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Check a config file and name every problem with its line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, pos, err := config.Load(args[0])
			var ps *config.Problems
			if errors.As(err, &ps) {
				fmt.Fprintln(cmd.OutOrStdout(), ps.Error())
				return fmt.Errorf("%s is not valid", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", args[0])
			for _, w := range cfg.Warnings() {
				w.Line = pos.Line(w.Key)
				fmt.Fprintf(cmd.OutOrStdout(), "  warning: %s\n", w)
			}
			return nil
		},
	})
	root.AddCommand(cfgCmd)
}
