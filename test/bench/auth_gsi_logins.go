package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/outbound"
	"sitebox/internal/x509grid"
	"sitebox/internal/xrootd/client"
	"sitebox/test/peers"
)

// gsiServerLogins is how many logins a server-bound row makes, and
// gsiServerClients how many at once.
const (
	gsiServerLogins  = 160
	gsiServerClients = 16
)

// measureServerLogins is a gsi row where the server, not the client,
// is the bound: xrdfs spends about 0.3 s of CPU per gsi login, so 16 of
// them on a small machine measure mostly themselves. Here the clients
// are sitebox's own root:// client (its gsi exchange, the same messages
// as XrdCl's), gsiServerClients goroutines logging in and out at once;
// connections/s is the logins over the wall time, and the client CPU
// is this process's.
func measureServerLogins(ctx context.Context, proc *peers.Process, port int, row AuthConnRow, grid *gridFiles) (AuthConnRow, error) {
	roots, err := x509grid.CertPool(grid.caDir, nil)
	if err != nil {
		return row, fmt.Errorf("bench auth: the grid CA directory: %w", err)
	}
	proxy := x509grid.NewCredentialFile(grid.proxy)
	if _, err := proxy.Get(); err != nil {
		return row, fmt.Errorf("bench auth: the proxy: %w", err)
	}
	opts := client.Options{Options: outbound.Options{Proxy: proxy.Get, GridRoots: roots}}
	addr := fmt.Sprintf("localhost:%d", port)
	row.Clients, row.Driver = gsiServerClients, "sitebox client"

	var left atomic.Int64
	left.Store(gsiServerLogins)
	srv0, serr := proc.CPUTime()
	cpu0 := selfCPU()
	began := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for range gsiServerClients {
		g.Go(func() error {
			for left.Add(-1) >= 0 {
				// A login without gsi is refused by the xrootd peer
				// (gsi only); the caller counts the box's gsi logins.
				c, err := client.DialOptions(gctx, addr, opts)
				if err != nil {
					return fmt.Errorf("bench auth: %s: %w", connLabel(row), err)
				}
				c.Close()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return row, err
	}
	wall := time.Since(began).Seconds()
	row.Conns = gsiServerLogins
	row.PerSec = gsiServerLogins / wall
	if srv1, err := proc.CPUTime(); err == nil && serr == nil {
		row.ServerMS = float64((srv1 - srv0).Microseconds()) / 1e3 / gsiServerLogins
	}
	row.ClientMS = float64((selfCPU() - cpu0).Microseconds()) / 1e3 / gsiServerLogins
	return row, nil
}

// selfCPU is this process's CPU time, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
