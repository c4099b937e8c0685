package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"sitebox/test/peers"
)

// startSiteboxDirector runs `sitebox serve --config` with only the
// director role, the data server at dataAddr listed as a static server
// holding everything. The https frontend must listen too (a director
// answers there as well), on its own free port.
func startSiteboxDirector(ctx context.Context, bin, dir, dataAddr string) (*redirector, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("sitebox binary: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rport, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	hport, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	cfgText := fmt.Sprintf(`[server]
state_dir = %q
log_level = "warn"

[root]
addr = "127.0.0.1:%d"

[https]
addr = "127.0.0.1:%d"

[director]
enabled = true

[[director.server]]
name = "ds1"
site = "bench"
root = "root://%s"
prefixes = ["/"]
`, filepath.Join(dir, "state"), rport, hport, dataAddr)
	cfgFile := filepath.Join(dir, "sitebox.toml")
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o644); err != nil {
		return nil, err
	}
	p, err := peers.StartSitebox(ctx, bin, []int{rport, hport}, "serve", "--config", cfgFile)
	if err != nil {
		return nil, fmt.Errorf("start sitebox director: %w", err)
	}
	return &redirector{
		name: "sitebox",
		addr: "127.0.0.1:" + strconv.Itoa(rport),
		rss:  p.PeakRSS,
		stop: p.Stop,
	}, nil
}

// portOf returns the port of a host:port, or 0.
func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}
