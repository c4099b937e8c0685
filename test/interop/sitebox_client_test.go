package interop

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestSiteboxClient: `sitebox get/put/ls/stat/cksum` against sitebox over
// both protocols, byte-identical.
func TestSiteboxClient(t *testing.T) {
	b := startBox(t, 1)
	data := writeRandom(t, filepath.Join(b.pools[0], "g.bin"), 5<<20+7)
	dir := t.TempDir()
	sb := func(args ...string) string {
		out, _ := run(t, false, siteboxBin, args...)
		return out
	}
	sb("get", b.rootURL+"//store/g.bin", dir+"/viaroot")
	sameFile(t, dir+"/viaroot", data)
	sb("get", "--ca", b.certFile, b.httpsURL+"/store/g.bin", dir+"/viahttps")
	sameFile(t, dir+"/viahttps", data)
	sb("put", dir+"/viaroot", b.rootURL+"//store/up/r.bin")
	sameFile(t, filepath.Join(b.pools[0], "up/r.bin"), data)
	sb("put", "--ca", b.certFile, dir+"/viaroot", b.httpsURL+"/store/up/h.bin")
	sameFile(t, filepath.Join(b.pools[0], "up/h.bin"), data)
	if out, err := run(t, true, siteboxBin, "put", dir+"/viaroot", b.rootURL+"//store/up/r.bin"); err == nil || !strings.Contains(out, "exists") {
		t.Errorf("put over an existing file without --force: %v %q", err, out)
	}
	if out := sb("ls", "-l", b.rootURL+"//store/up"); !strings.Contains(out, "/store/up/h.bin") || !strings.Contains(out, strconv.Itoa(len(data))) {
		t.Errorf("ls -l: %q", out)
	}
	if out := sb("stat", b.rootURL+"//store/g.bin"); !strings.Contains(out, "Size:  "+strconv.Itoa(len(data))) {
		t.Errorf("stat: %q", out)
	}
	r := sb("cksum", b.rootURL+"//store/g.bin")
	h := sb("cksum", "--ca", b.certFile, b.httpsURL+"/store/g.bin")
	if strings.Fields(r)[0] != strings.Fields(h)[0] {
		t.Errorf("checksums differ by protocol: %q vs %q", r, h)
	}
	if out, err := run(t, true, siteboxBin, "get", b.rootURL+"//store/none", dir+"/none"); err == nil || !strings.Contains(out, "does not exist") {
		t.Errorf("get of a missing file: %v %q", err, out)
	}
	if _, err := os.Stat(dir + "/none"); err == nil {
		t.Error("failed get left a file behind")
	}
}

// TestSiteboxGetFromXrootd: the sitebox client against a real XRootD 5.5
// data server, and a clean error (not a crash or hang) when that server
// dies in the middle of a transfer.
func TestSiteboxGetFromXrootd(t *testing.T) {
	peers.Require(t, "xrootd")
	data := t.TempDir()
	content := writeRandom(t, filepath.Join(data, "x.bin"), 3<<20)
	writeRandom(t, filepath.Join(data, "big.bin"), 512<<20)
	port, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{DataDir: data, Port: port, Name: "interop-get", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	u := "root://127.0.0.1:" + strconv.Itoa(port)
	dir := t.TempDir()
	run(t, false, siteboxBin, "get", u+"//x.bin", dir+"/x")
	sameFile(t, dir+"/x", content)
	run(t, false, siteboxBin, "put", dir+"/x", u+"//up/y.bin")
	sameFile(t, filepath.Join(data, "up/y.bin"), content)
	if out, _ := run(t, false, siteboxBin, "ls", u+"//"); !strings.Contains(out, "/x.bin") {
		t.Errorf("ls: %q", out)
	}

	// Kill the server mid-transfer: the client must fail with an error.
	go func() { time.Sleep(150 * time.Millisecond); x.Kill() }()
	start := time.Now()
	out, err := run(t, true, siteboxBin, "get", u+"//big.bin", dir+"/big")
	if err == nil {
		t.Skip("transfer finished before the server was killed")
	}
	if strings.Contains(out, "panic") || time.Since(start) > time.Minute {
		t.Fatalf("dropped connection: %v after %v: %s", err, time.Since(start), out)
	}
	if _, err := os.Stat(dir + "/big"); err == nil {
		t.Error("interrupted get left a partial file under the real name")
	}
}
