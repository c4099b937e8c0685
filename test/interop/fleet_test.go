package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// The regional operator's fleet view, and a planned downtime: the box in
// downtime shows as such (not as a failure) and the director routes
// clients around it.
func TestFleetAndDowntime(t *testing.T) {
	peers.Require(t, "xrdcp")
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	poolA, poolB := t.TempDir(), t.TempDir()
	rep := writeRandom(t, filepath.Join(poolA, "rep.bin"), 500_000)
	os.WriteFile(filepath.Join(poolB, "rep.bin"), rep, 0o644)
	writeRandom(t, filepath.Join(poolB, "onlyB.bin"), 1000)
	export := func(pool string) string {
		return "[[export]]\nprefix = \"/store\"\npools = [" + strconv.Quote(pool) + "]\n"
	}
	a := startFedNode(t, "boxA", "A", export(poolA)+advertiseTo(region, "300ms"))
	b := startFedNode(t, "boxB", "B", export(poolB)+advertiseTo(region, "300ms"))
	fleet := func() string {
		out, _ := run(t, false, siteboxBin, "fleet", region.httpsURL, "--ca", region.certFile)
		return out
	}
	waitFor(t, 10*time.Second, "both boxes in the fleet", func() bool {
		f := fleet()
		return strings.Contains(f, "boxA") && strings.Contains(f, "boxB")
	})
	f := fleet()
	t.Logf("fleet:\n%s", f)
	for _, want := range []string{"2 box(es)", "origin", "dev", "ok"} {
		if !strings.Contains(f, want) {
			t.Errorf("fleet view lacks %q", want)
		}
	}
	out, _ := run(t, false, siteboxBin, "downtime", "add", "--state-dir", b.state, "--start", "now", "--end", "1h", "--reason", "disk swap")
	t.Logf("%s", strings.TrimSpace(out))
	waitFor(t, 10*time.Second, "B's downtime in the fleet view", func() bool {
		return strings.Contains(fleet(), "DOWNTIME until")
	})
	f = fleet()
	t.Logf("fleet during the downtime:\n%s", f)
	for _, line := range strings.Split(f, "\n") {
		if strings.HasPrefix(line, "boxB") && !strings.Contains(line, "disk swap") {
			t.Errorf("boxB's line does not give the reason: %q", line)
		}
		if strings.HasPrefix(line, "boxA") && strings.Contains(line, "DOWNTIME") {
			t.Errorf("boxA shows a downtime: %q", line)
		}
	}
	dir := t.TempDir()
	// Replicated data comes from A; what only B holds is not offered.
	for i := 0; i < 3; i++ {
		run(t, false, "xrdcp", "-f", region.rootURL+"//store/rep.bin", dir+"/rep")
		sameFile(t, dir+"/rep", rep)
	}
	if strings.Contains(b.proc.Log.String(), "rep.bin") {
		t.Error("a client was sent to B during its downtime")
	}
	if out, err := run(t, true, "xrdcp", "-f", region.rootURL+"//store/onlyB.bin", dir+"/b"); err == nil {
		t.Errorf("a file only B holds was served during B's downtime: %s", out)
	}
	// Ended: B is back.
	run(t, false, siteboxBin, "downtime", "end", "--state-dir", b.state)
	waitFor(t, 10*time.Second, "B back in service", func() bool { return !strings.Contains(fleet(), "DOWNTIME") })
	run(t, false, "xrdcp", "-f", region.rootURL+"//store/onlyB.bin", dir+"/b")
	_ = a
}
