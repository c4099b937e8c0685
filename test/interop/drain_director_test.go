package interop

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestRestartDrainRedirectLearnedFromTheDirector: a box with no [root]
// drain_redirect that advertises to a director learns the director's
// root:// address from its answers; on SIGTERM, a client holding a file
// open there that asks for another file is redirected to the director,
// which sends it to the replica on another box; the box exits once the
// client closes.
func TestRestartDrainRedirectLearnedFromTheDirector(t *testing.T) {
	peers.Require(t, "xrdcp")
	py := python(t)
	dir := startFedNode(t, "dir", "D", "[director]\nenabled = true\nstartup_wait = \"1s\"\n")
	poolA, poolB := t.TempDir(), t.TempDir()
	writeRandom(t, filepath.Join(poolA, "held.bin"), 2<<20)
	other := writeRandom(t, filepath.Join(poolB, "other.bin"), 3<<20+5)
	export := func(pool string) string { return "[[export]]\nprefix = \"/store\"\npools = [" + quote(pool) + "]\n" }
	a := startFedNode(t, "originA", "A", export(poolA)+advertiseTo(dir, "500ms"))
	b := startFedNode(t, "originB", "B", export(poolB)+advertiseTo(dir, "500ms"))
	waitFor(t, 10*time.Second, "both origins at the director", func() bool {
		out, _ := run(t, false, siteboxBin, "federation", dir.httpsURL, "--ca", dir.certFile)
		return strings.Count(out, " ok (seen") == 2
	})

	client := exec.Command(py, "-c", `
import sys, hashlib
from XRootD import client
f = client.File()
st, _ = f.open(sys.argv[1])
assert st.ok, st.message
st, buf = f.read(0, 1 << 20)
assert st.ok, st.message
print("open", flush=True)
sys.stdin.readline()
g = client.File()
st, _ = g.open(sys.argv[2])
assert st.ok, st.message
st, data = g.read(0, 16 << 20)
assert st.ok, st.message
print("read", len(data), hashlib.sha256(data).hexdigest(), g.get_property("DataServer"), flush=True)
g.close()
f.close()
`, a.rootURL+"//store/held.bin", a.rootURL+"//store/other.bin")
	client.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=1")
	stdin, _ := client.StdinPipe()
	stdout, _ := client.StdoutPipe()
	var stderr strings.Builder
	client.Stderr = &stderr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); client.Process.Kill(); client.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "open" {
		t.Fatalf("client: %q %s", lines.Text(), stderr.String())
	}

	syscall.Kill(a.proc.Cmd.Process.Pid, syscall.SIGTERM)
	waitFor(t, 10*time.Second, "the box draining towards the director", func() bool {
		return strings.Contains(a.proc.Log.String(), "to="+dir.rootHost)
	})
	fmt.Fprintln(stdin)
	if !lines.Scan() {
		t.Fatalf("client: no answer: %s", stderr.String())
	}
	want := fmt.Sprintf("read %d %x", len(other), sha256.Sum256(other))
	if got := lines.Text(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, b.rootHost) {
		t.Fatalf("client read %q; want %q from originB %s", got, want, b.rootHost)
	}
	t.Logf("client: %s", lines.Text())
	stdin.Close()
	select {
	case <-a.proc.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("the box did not stop once the client closed")
	}
	if !strings.Contains(a.proc.Log.String(), "drained: every session ended") {
		t.Errorf("the box did not drain: %s", tail(a.proc.Log.String(), 3000))
	}
}
