package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"sitebox/test/peers"
)

// needBinAndDir is the check of every benchmark that starts sitebox boxes
// of its own in a scratch directory.
func needBinAndDir(name, bin, dir string) error {
	if bin == "" {
		return fmt.Errorf("%s: no sitebox binary given", name)
	}
	if dir == "" {
		return fmt.Errorf("%s: no work directory given", name)
	}
	return nil
}

// startConfigBox writes a box's TOML to file, with keygen makes its site
// issuer's key (--force: a reused work directory already has one, and no
// token outlives a run), and serves from it; ports are the listeners to
// wait for.
func startConfigBox(ctx context.Context, bin, file, toml string, keygen bool, ports []int) (*peers.Process, error) {
	if err := os.WriteFile(file, []byte(toml), 0o644); err != nil {
		return nil, err
	}
	if keygen {
		if out, err := exec.CommandContext(ctx, bin, "token", "keygen", "--force", "--config", file).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sitebox token keygen: %w: %s", err, trimMsg(out))
		}
	}
	return peers.StartSitebox(ctx, bin, ports, "serve", "--config", file)
}
