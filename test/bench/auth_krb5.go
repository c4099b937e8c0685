package bench

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/test/peers"
)

// authConnects is how many connections each connection-time row opens,
// one after another.
const authConnects = 30

// benchRealm is the throwaway Kerberos realm of the krb5 rows.
const benchRealm = "BENCH.SITEBOX"

// AuthConnRow is one way a root:// client authenticates, measured at
// connection time: each connection is a fresh xrdfs stat (handshake,
// login, kXR_auth, one request), so the rows differ only by the security
// protocol and TLS.
type AuthConnRow struct {
	Protocol string // XrdSecPROTOCOL: unix (anonymous), krb5, ztn, gsi
	TLS      bool   // roots://
	Server   string // "" for the box, "xrootd" for the peer (gsi rows)
	// Clients connect at once (0 or 1: one at a time).
	Clients int
	// Driver is the client when it is not xrdfs ("sitebox client": the
	// box's own root:// client, for rows bound by the server).
	Driver string
	Conns  int
	// PerSec is 1 / the median connection's wall time for one client,
	// the connections over the row's wall time for several.
	PerSec float64
	// ServerMS and ClientMS are CPU milliseconds per connection.
	ServerMS, ClientMS float64
}

// authConnect measures connection-time authentication against a box with
// [auth.kerberos] and a site issuer, with a real MIT KDC. Without the
// Kerberos tools it returns no rows and a note saying why.
func authConnect(ctx context.Context, cfg AuthConfig, pool string) ([]AuthConnRow, string, error) {
	for _, tool := range append(peers.KDCTools, "xrdfs") {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Sprintf("krb5 rows skipped: %s not installed (scripts/setup.sh installs krb5-kdc, krb5-admin-server, krb5-user)", tool), nil
		}
	}
	dir := filepath.Join(cfg.WorkDir, "krb5")
	kdc, err := peers.StartKDC(ctx, filepath.Join(dir, "kdc"), benchRealm)
	if err != nil {
		return nil, "", fmt.Errorf("bench auth: %w", err)
	}
	defer kdc.Stop()
	keytab, err := kdc.Keytab(ctx, "box.keytab", "xrootd/localhost")
	if err == nil {
		err = kdc.Admin(ctx, "addprinc -pw bench-pw bench")
	}
	if err != nil {
		return nil, "", fmt.Errorf("bench auth: %w", err)
	}
	krbEnv, err := kdc.Kinit(ctx, "bench", "bench-pw", filepath.Join(dir, "bench.cc"))
	if err != nil {
		return nil, "", fmt.Errorf("bench auth: %w", err)
	}
	box, port, token, err := startKrb5Box(ctx, cfg.Sitebox, dir, pool, keytab)
	if box != nil {
		defer box.Stop()
	}
	if err != nil {
		return nil, "", err
	}
	caDir := filepath.Join(dir, "x509")
	if err := makeCADir(ctx, caDir, filepath.Join(dir, "box", "tls", "cert.pem")); err != nil {
		return nil, "", fmt.Errorf("bench auth: %w", err)
	}
	tls := "X509_CERT_DIR=" + caDir
	rows := []struct {
		row AuthConnRow
		env []string
	}{
		{AuthConnRow{Protocol: "unix"}, []string{"XrdSecPROTOCOL=unix"}},
		{AuthConnRow{Protocol: "krb5"}, append([]string{"XrdSecPROTOCOL=krb5"}, krbEnv...)},
		{AuthConnRow{Protocol: "unix", TLS: true}, []string{"XrdSecPROTOCOL=unix", tls}},
		{AuthConnRow{Protocol: "krb5", TLS: true}, append([]string{"XrdSecPROTOCOL=krb5", tls}, krbEnv...)},
		{AuthConnRow{Protocol: "ztn", TLS: true}, []string{"XrdSecPROTOCOL=ztn", tls, "BEARER_TOKEN=" + token}},
	}
	var out []AuthConnRow
	for _, r := range rows {
		before := strings.Count(box.Log.String(), "protocol="+r.row.Protocol)
		row, err := measureConnects(ctx, box, port, "/bench/none/f", r.row, r.env)
		if err != nil {
			return nil, "", err
		}
		// Proof the row took krb5: the box logs each success at info
		// (ztn at debug; XrdSecPROTOCOL leaves the client no fallback).
		if err := checkLogged(r.row.Protocol == "krb5", box, "protocol="+r.row.Protocol, before, row); err != nil {
			return nil, "", err
		}
		fmt.Fprintf(cfg.Out, "  connect %-20s %6.1f conn/s  cpu/conn server %.2f ms client %.1f ms\n", connLabel(row), row.PerSec, row.ServerMS, row.ClientMS)
		out = append(out, row)
	}
	return out, "", nil
}

// measureConnects opens authConnects connections to the server at
// port (at least two per client when row.Clients connect at once), each
// a fresh xrdfs stat of path with env, and measures them.
func measureConnects(ctx context.Context, box *peers.Process, port int, path string, row AuthConnRow, env []string) (AuthConnRow, error) {
	scheme := "root"
	if row.TLS {
		scheme = "roots"
	}
	argv := []string{"xrdfs", fmt.Sprintf("%s://localhost:%d", scheme, port), "stat", path}
	clients := max(row.Clients, 1)
	conns := max(authConnects, 2*clients)
	conns -= conns % clients
	srv0, serr := box.CPUTime()
	var mu sync.Mutex
	var client time.Duration
	var secs []float64
	g, gctx := errgroup.WithContext(ctx)
	began := time.Now()
	for range clients {
		g.Go(func() error {
			for range conns / clients {
				cmd := clientCmd(gctx, argv, env)
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("bench auth: %s: xrdfs stat: %w: %s", connLabel(row), err, trimMsg(out))
				}
				mu.Lock()
				secs = append(secs, time.Since(start).Seconds())
				client += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return row, err
	}
	row.Conns = conns
	if clients == 1 {
		// The median connection: xrdfs now and then stalls 5 s in
		// connect (against any server on this machine), which would
		// swamp a mean.
		row.PerSec = 1 / median(secs)
	} else {
		row.PerSec = float64(conns) / time.Since(began).Seconds()
	}
	if srv1, err := box.CPUTime(); err == nil && serr == nil {
		row.ServerMS = float64((srv1 - srv0).Microseconds()) / 1e3 / float64(conns)
	}
	row.ClientMS = float64(client.Microseconds()) / 1e3 / float64(conns)
	return row, nil
}

// startKrb5Box starts a box over pool taking Kerberos tickets (principal
// xrootd/localhost of the bench realm) and its own tokens, and returns a
// token for the ztn row.
func startKrb5Box(ctx context.Context, bin, dir, pool, keytab string) (*peers.Process, int, string, error) {
	rp, err := peers.FreePort()
	if err != nil {
		return nil, 0, "", err
	}
	hp, err := peers.FreePort()
	if err != nil {
		return nil, 0, "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[server]\nname = \"bench-auth-krb5\"\nstate_dir = %q\nlog_level = \"info\"\n\n", filepath.Join(dir, "box"))
	fmt.Fprintf(&b, "[root]\naddr = \"127.0.0.1:%d\"\n\n[https]\naddr = \"127.0.0.1:%d\"\n\n", rp, hp)
	fmt.Fprintf(&b, "[[export]]\nprefix = \"/bench\"\npools = [%q]\n\n", pool)
	fmt.Fprintf(&b, "[auth]\nsite_issuer = true\nissuer_url = \"https://127.0.0.1:%d\"\n\n", hp)
	fmt.Fprintf(&b, "[auth.kerberos]\nkeytab = %q\nprincipals = [\"xrootd/localhost@%s\"]\n[[auth.kerberos.realm]]\nname = %q\nscopes = [\"storage.read:/bench\"]\n", keytab, benchRealm, benchRealm)
	file := filepath.Join(dir, "box.toml")
	p, err := startConfigBox(ctx, bin, file, b.String(), true, []int{rp, hp})
	if err != nil {
		return nil, 0, "", fmt.Errorf("bench auth: start the krb5 box: %w", err)
	}
	out, err := exec.CommandContext(ctx, bin, "token", "issue", "--config", file, "--sub", "bench", "--scope", "storage.read:/bench", "--lifetime", "1h").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = ee.Stderr
		}
		return p, 0, "", fmt.Errorf("bench auth: sitebox token issue: %w: %s", err, trimMsg(out))
	}
	return p, rp, strings.TrimSpace(string(out)), nil
}

func connLabel(r AuthConnRow) string {
	scheme := "root://"
	if r.TLS {
		scheme = "roots://"
	}
	if r.Server != "" {
		scheme += " (" + r.Server + ")"
	}
	if r.Clients > 1 {
		scheme += fmt.Sprintf(", %d clients", r.Clients)
	}
	if r.Driver != "" {
		scheme += ", " + r.Driver
	}
	return r.Protocol + ", " + scheme
}

// formatAuthConnect is the report's connection-time section.
func formatAuthConnect(r *AuthReport) string {
	if len(r.Connect) == 0 {
		if r.ConnectNote != "" {
			return "\n" + r.ConnectNote + ".\n"
		}
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nAuthentication at connection time: %d fresh `xrdfs stat` connections per row, one at a time (handshake, login, kXR_auth, one request), against a box with [auth.kerberos] (a real MIT KDC, realm %s) and a site issuer.\n\n", authConnects, benchRealm)
	b.WriteString("| security protocol | connections/s | CPU ms per connection server + client | vs unix (anonymous), same transport |\n|---|---:|---:|---:|\n")
	for _, row := range r.Connect {
		vs := "—"
		for _, base := range r.Connect {
			if base.Protocol == "unix" && base.TLS == row.TLS && row.Protocol != "unix" && base.PerSec > 0 {
				vs = fmt.Sprintf("%+.1f %% connections/s, %+.2f ms server CPU", 100*(row.PerSec/base.PerSec-1), row.ServerMS-base.ServerMS)
			}
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.2f + %.1f | %s |\n", connLabel(row), row.PerSec, row.ServerMS, row.ClientMS, vs)
	}
	b.WriteString("\nThe client's CPU includes starting xrdfs (the same in every row); after the first connection the service ticket is cached, so krb5 adds no KDC round trip. Connections/s is 1 / the median connection's wall time (one client at a time).\n")
	return b.String()
}
