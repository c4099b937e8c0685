package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// TestMultiPool: files placed on either pool are found and listed together,
// over both protocols; an upload lands on exactly one pool.
func TestMultiPool(t *testing.T) {
	peers.Require(t, "xrdfs")
	peers.Require(t, "curl")
	b := startBox(t, 2)
	d1 := writeRandom(t, filepath.Join(b.pools[0], "ds/one.bin"), 1000)
	d2 := writeRandom(t, filepath.Join(b.pools[1], "ds/two.bin"), 2000)
	out, _ := run(t, false, "xrdfs", b.rootHost, "ls", "-l", "/store/ds")
	if !strings.Contains(out, "/store/ds/one.bin") || !strings.Contains(out, "/store/ds/two.bin") {
		t.Fatalf("merged listing: %q", out)
	}
	dir := t.TempDir()
	run(t, false, "xrdcp", "-f", b.rootURL+"//store/ds/two.bin", dir+"/two")
	sameFile(t, dir+"/two", d2)
	got, _ := run(t, false, "curl", "-sS", "--fail", "--cacert", b.certFile, b.httpsURL+"/store/ds/one.bin")
	if got != string(d1) {
		t.Error("https read from pool 1 differs")
	}
	run(t, false, "xrdcp", "-f", dir+"/two", b.rootURL+"//store/ds/three.bin")
	n := 0
	for _, p := range b.pools {
		if _, err := os.Stat(filepath.Join(p, "ds/three.bin")); err == nil {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("uploaded file is on %d pools, want exactly 1", n)
	}
}
