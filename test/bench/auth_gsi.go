package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sitebox/test/peers"
)

// libXrdVoms is the VOMS plugin the xrootd peer extracts attributes with.
const libXrdVoms = "/usr/lib/x86_64-linux-gnu/libXrdVoms-5.so"

// gsiClients are the gsi rows' numbers of clients connecting at once.
var gsiClients = []int{1, 16}

// authConnectGSI measures gsi logins the way authConnect measures krb5:
// fresh `xrdfs stat` connections with a VOMS proxy, against a box with
// [auth.x509] and a CA-issued host certificate and against xrootd 5.5
// with gsi and libXrdVoms, over root:// and roots://. Without the grid
// tools it returns no rows and a note saying why; without xrootd or its
// VOMS plugin, the box's rows alone.
func authConnectGSI(ctx context.Context, cfg AuthConfig, pool string) ([]AuthConnRow, []AuthGSIRate, string, error) {
	for _, tool := range []string{"openssl", "voms-proxy-fake", "xrdfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, nil, fmt.Sprintf("gsi rows skipped: %s not installed (scripts/setup.sh installs voms-clients)", tool), nil
		}
	}
	dir := filepath.Join(cfg.WorkDir, "gsi")
	grid, err := makeGrid(ctx, dir)
	if err != nil {
		return nil, nil, "", err
	}
	box, port, err := startGSIBox(ctx, cfg.Sitebox, dir, pool, grid)
	if box != nil {
		defer box.Stop()
	}
	if err != nil {
		return nil, nil, "", err
	}
	env := []string{"XrdSecPROTOCOL=gsi", "X509_USER_PROXY=" + grid.proxy, "X509_CERT_DIR=" + grid.caDir}
	type target struct {
		row  AuthConnRow
		proc *peers.Process
		port int
		path string
	}
	targets := []target{
		{AuthConnRow{Protocol: "gsi"}, box, port, "/bench/none/f"},
		{AuthConnRow{Protocol: "gsi", TLS: true}, box, port, "/bench/none/f"},
	}
	var xrdTarget *peers.Process
	xport := 0
	if xrd, port, err := startGSIXrootd(ctx, dir, pool, grid); err != nil {
		return nil, nil, "", err
	} else if xrd != nil {
		defer xrd.Stop()
		xrdTarget, xport = xrd, port
		targets = append(targets,
			target{AuthConnRow{Protocol: "gsi", Server: "xrootd"}, xrd, xport, "/none/f"},
			target{AuthConnRow{Protocol: "gsi", TLS: true, Server: "xrootd"}, xrd, xport, "/none/f"})
	}
	var rows []AuthConnRow
	for _, clients := range gsiClients {
		for _, tg := range targets {
			tg.row.Clients = clients
			before := strings.Count(box.Log.String(), "protocol=gsi")
			row, err := measureConnects(ctx, tg.proc, tg.port, tg.path, tg.row, env)
			if err != nil {
				return nil, nil, "", err
			}
			// Proof the box's rows took gsi: it logs each success at info.
			if err := checkLogged(tg.proc == box, box, "protocol=gsi", before, row); err != nil {
				return nil, nil, "", err
			}
			fmt.Fprintf(cfg.Out, "  connect %-40s %6.1f conn/s  cpu/conn server %.2f ms client %.1f ms\n", connLabel(row), row.PerSec, row.ServerMS, row.ClientMS)
			rows = append(rows, row)
		}
	}
	// The server-bound rows: the box's own client logging in 16 at
	// once, over root:// to the box and to xrootd.
	for _, tg := range targets {
		if tg.row.TLS {
			continue
		}
		before := strings.Count(box.Log.String(), "protocol=gsi")
		row, err := measureServerLogins(ctx, tg.proc, tg.port, tg.row, grid)
		if err != nil {
			return nil, nil, "", err
		}
		if err := checkLogged(tg.proc == box, box, "protocol=gsi", before, row); err != nil {
			return nil, nil, "", err
		}
		fmt.Fprintf(cfg.Out, "  connect %-40s %6.1f conn/s  cpu/conn server %.2f ms client %.1f ms\n", connLabel(row), row.PerSec, row.ServerMS, row.ClientMS)
		rows = append(rows, row)
	}
	rates, err := measureGSIRates(ctx, cfg, pool, box, port, xrdTarget, xport, env)
	if err != nil {
		return nil, nil, "", err
	}
	return rows, rates, "", nil
}

// startGSIBox starts a box over pool taking X.509 proxies, with the
// grid's host certificate as its https and gsi credential.
func startGSIBox(ctx context.Context, bin, dir, pool string, grid *gridFiles) (*peers.Process, int, error) {
	rp, err := peers.FreePort()
	if err != nil {
		return nil, 0, err
	}
	hp, err := peers.FreePort()
	if err != nil {
		return nil, 0, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[server]\nname = \"bench-auth-gsi\"\nstate_dir = %q\nlog_level = \"info\"\n\n", filepath.Join(dir, "box"))
	fmt.Fprintf(&b, "[root]\naddr = \"127.0.0.1:%d\"\n\n[https]\naddr = \"127.0.0.1:%d\"\ncert = %q\nkey = %q\n\n", rp, hp, grid.hostCert, grid.hostKey)
	fmt.Fprintf(&b, "[[export]]\nprefix = \"/bench\"\npools = [%q]\n\n", pool)
	fmt.Fprintf(&b, "[auth.x509]\ncert_dir = %q\nvoms_dir = %q\n", grid.caDir, grid.vomsDir)
	p, err := startConfigBox(ctx, bin, filepath.Join(dir, "box.toml"), b.String(), false, []int{rp, hp})
	if err != nil {
		return p, 0, fmt.Errorf("bench auth: start the gsi box: %w", err)
	}
	return p, rp, nil
}

// startGSIXrootd runs the xrootd peer with gsi (the same host
// credential, CA directory and vomsdir) and TLS over pool, exported as
// "/"; nil when xrootd or its VOMS plugin is not installed.
func startGSIXrootd(ctx context.Context, dir, pool string, grid *gridFiles) (*peers.Process, int, error) {
	if _, err := exec.LookPath("xrootd"); err != nil {
		return nil, 0, nil
	}
	if _, err := os.Stat(libXrdVoms); err != nil {
		return nil, 0, nil
	}
	certs, vomsDir, cert, key, err := copyForXrootd(filepath.Join(dir, "xrootd", "sec"), grid)
	if err != nil {
		return nil, 0, fmt.Errorf("bench auth: the xrootd peer's credentials: %w", err)
	}
	port, err := peers.FreePort()
	if err != nil {
		return nil, 0, err
	}
	x, err := peers.StartXrootd(ctx, peers.XrootdConfig{DataDir: pool, Port: port, Name: "bench-auth-gsi", WorkDir: filepath.Join(dir, "xrootd"),
		Extra: []string{
			"xrootd.seclib libXrdSec.so",
			"sec.protocol gsi -ca:verifyss -crl:try -certdir:" + certs + " -crldir:" + certs + " -cert:" + cert + " -key:" + key +
				" -gmapopt:nomap -vomsat:extract -vomsfun:libXrdVoms-5.so -vomsfunparms:certfmt=raw|vos=" + gsiBenchVO + "|grpopt=useall",
			"sec.protbind * only gsi",
			"xrd.tls " + cert + " " + key, "xrd.tlsca certdir " + certs,
		},
		Env: []string{"X509_CERT_DIR=" + certs, "X509_VOMS_DIR=" + vomsDir},
	})
	if err != nil {
		return nil, 0, fmt.Errorf("bench auth: start the gsi xrootd peer: %w", err)
	}
	return x, port, nil
}

// formatAuthGSI is the report's gsi section: logins per second of the
// box beside xrootd's.
func formatAuthGSI(r *AuthReport) string {
	if len(r.GSI) == 0 {
		if r.GSINote != "" {
			return "\n" + r.GSINote + ".\n"
		}
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\ngsi logins: at least %d fresh `xrdfs stat` connections per row with a VOMS proxy, one client at a time and 16 at once, against a box with [auth.x509] and a CA-issued host certificate, and against xrootd 5.5 with gsi and libXrdVoms (2048-bit RSA keys throughout).\n\n", authConnects)
	b.WriteString("| server | transport | clients | connections/s | CPU ms per connection server + client | box vs xrootd |\n|---|---|---:|---:|---:|---:|\n")
	for _, row := range r.GSI {
		server, scheme := serverName(row.Server), "root://"
		if row.TLS {
			scheme = "roots://"
		}
		vs := "—"
		for _, x := range r.GSI {
			if row.Server == "" && x.Server == "xrootd" && x.TLS == row.TLS && x.Clients == row.Clients && x.Driver == row.Driver && x.PerSec > 0 {
				vs = fmt.Sprintf("%+.1f %% connections/s, %+.2f ms server CPU", 100*(row.PerSec/x.PerSec-1), row.ServerMS-x.ServerMS)
			}
		}
		clients := fmt.Sprint(max(row.Clients, 1))
		if row.Driver != "" {
			clients += " (" + row.Driver + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.2f + %.1f | %s |\n", server, scheme, clients, row.PerSec, row.ServerMS, row.ClientMS, vs)
	}
	if len(r.GSIRates) > 0 {
		b.WriteString("\nData rate after the login: the none level's file over root://, its size over the median `xrdcp` less the median `xrdfs stat` with the same login (the client's start and login), three of each.\n\n| server | login | MB/s |\n|---|---|---:|\n")
		for _, x := range r.GSIRates {
			fmt.Fprintf(&b, "| %s | %s | %.0f |\n", serverName(x.Server), x.Protocol, x.MBps)
		}
	}
	b.WriteString("\nThe rows of 16 clients with the sitebox client log in with sitebox's own root:// client (the gsi exchange XrdCl runs) from goroutines of the benchmark, whose CPU is the client's: the server is then the bound. With 16 xrdfs clients, connections/s is the connections over the row's wall time; the clients' own CPU (xrdfs, about 0.3 s per gsi login) shares the machine with the server's. A connection's time is mostly the client's (xrdfs starting, loading its proxy, its own RSA and DH work); the server's CPU per login bounds the logins a server sustains per core. xrootd 5.5 agrees keys on 512-bit DH parameters, the box on RFC 3526's 3072-bit group.\n")
	return b.String()
}

// AuthGSIRate is the data rate of a copy after a login: what a gsi
// login leaves of a server's speed.
type AuthGSIRate struct {
	Server   string  // "" for the box, "xrootd"
	Protocol string  // the login's: gsi, or unix (anonymous) as the base
	MBps     float64 // the median of gsiRateRuns copies
}

// gsiRateRuns is how many copies each rate is the median of.
const gsiRateRuns = 3

// measureGSIRates copies the none level's file to /dev/null with xrdcp
// over root:// after a gsi login and, for the box, after an anonymous
// one; xrd is nil without the xrootd peer.
func measureGSIRates(ctx context.Context, cfg AuthConfig, pool string, box *peers.Process, port int, xrd *peers.Process, xport int, gsiEnv []string) ([]AuthGSIRate, error) {
	fi, err := os.Stat(filepath.Join(pool, "none", "f"))
	if err != nil {
		return nil, fmt.Errorf("bench auth: the gsi rates' file: %w", err)
	}
	type copyRow struct {
		rate         AuthGSIRate
		server       *peers.Process
		origin, path string // root://host:port, /the/file
		env          []string
	}
	boxOrigin := fmt.Sprintf("root://localhost:%d", port)
	todo := []copyRow{
		{AuthGSIRate{Protocol: "gsi"}, box, boxOrigin, "/bench/none/f", gsiEnv},
		{AuthGSIRate{Protocol: "unix"}, box, boxOrigin, "/bench/none/f", []string{"XrdSecPROTOCOL=unix"}},
	}
	if xrd != nil {
		todo = append(todo, copyRow{AuthGSIRate{Server: "xrootd", Protocol: "gsi"}, xrd, fmt.Sprintf("root://localhost:%d", xport), "/none/f", gsiEnv})
	}
	var rates []AuthGSIRate
	for _, c := range todo {
		var copies, logins []float64
		for range gsiRateRuns {
			for _, argv := range [][]string{{"xrdcp", "-f", "-s", c.origin + "/" + c.path, "/dev/null"}, {"xrdfs", c.origin, "stat", c.path}} {
				m, err := runAuthPath(ctx, authPath{argv: argv, env: c.env, server: c.server})
				if err != nil {
					return nil, fmt.Errorf("bench auth: after a %s login: %w", c.rate.Protocol, err)
				}
				if argv[0] == "xrdcp" {
					copies = append(copies, m.secs)
				} else {
					logins = append(logins, m.secs)
				}
			}
		}
		// The transfer's own time: a copy less a client's start and
		// login with the same credential (an xrdfs stat).
		secs := median(copies) - median(logins)
		if secs <= 0 {
			secs = median(copies)
		}
		c.rate.MBps = float64(fi.Size()) / 1e6 / secs
		fmt.Fprintf(cfg.Out, "  copy after a %s login (%s) %8.0f MB/s\n", c.rate.Protocol, serverName(c.rate.Server), c.rate.MBps)
		rates = append(rates, c.rate)
	}
	return rates, nil
}

func serverName(s string) string {
	if s == "" {
		return "sitebox"
	}
	return s
}

// checkLogged is the proof a box's row took its protocol: the box logs
// each success with marker (at info), so its log holds row.Conns more of
// them than before the row.
func checkLogged(isBox bool, box *peers.Process, marker string, before int, row AuthConnRow) error {
	if !isBox {
		return nil
	}
	if n := box.Log.Count(marker, before+row.Conns, 5*time.Second) - before; n < row.Conns {
		return fmt.Errorf("bench auth: the %s row did not authenticate every connection with %s: %d of %d logged %q",
			connLabel(row), strings.TrimPrefix(marker, "protocol="), n, row.Conns, marker)
	}
	return nil
}
