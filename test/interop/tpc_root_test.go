package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestXrdcpTPC runs `xrdcp --tpc only` between two boxes and between a
// box and a real xrootd 5.5 in both directions: the destination pulls
// from the source with the tpc.key rendezvous, and the copy is
// byte-identical. A refused copy leaves nothing at the destination.
func TestXrdcpTPC(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "xrootd")
	a := startBox(t, 1, tpcAllowLoopback...)
	b := startBox(t, 1, tpcAllowLoopback...)
	data := writeRandom(t, filepath.Join(a.pools[0], "src.bin"), 7<<20+5)
	xdata := t.TempDir()
	if err := os.WriteFile(filepath.Join(xdata, "src.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	xp, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: xdata, Port: xp, Name: "tpc-root-" + strconv.Itoa(xp), WorkDir: t.TempDir(),
		Extra: []string{"ofs.tpc pgm /usr/bin/xrdcp --server", "xrootd.chksum adler32"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)
	xURL := "root://127.0.0.1:" + strconv.Itoa(xp)

	cases := []struct {
		name, src, dst, landed string
	}{
		{"box to box", a.rootURL + "//store/src.bin", b.rootURL + "//store/b2b.bin", filepath.Join(b.pools[0], "b2b.bin")},
		{"box to xrootd", a.rootURL + "//store/src.bin", xURL + "//b2x.bin", filepath.Join(xdata, "b2x.bin")},
		{"xrootd to box", xURL + "//src.bin", b.rootURL + "//store/dir/x2b.bin", filepath.Join(b.pools[0], "dir/x2b.bin")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run(t, false, "xrdcp", "-f", "--tpc", "only", c.src, c.dst)
			sameFile(t, c.landed, data)
		})
	}
	// xrdcp stats the destination handle as its progress, once more
	// after the copy landed: the box answers it with the landed file.
	if log := b.proc.Log.String(); strings.Contains(log, "request failed") {
		t.Errorf("the destination box failed a request of xrdcp's copy:\n%s", log)
	}
	t.Run("box to box, --tpc first", func(t *testing.T) {
		run(t, false, "xrdcp", "-f", "--tpc", "first", a.rootURL+"//store/src.bin", b.rootURL+"//store/first.bin")
		sameFile(t, filepath.Join(b.pools[0], "first.bin"), data)
	})
	t.Run("query config tpc", func(t *testing.T) {
		out, _ := run(t, false, "xrdfs", b.rootHost, "query", "config", "tpc")
		if strings.TrimSpace(out) != "1" {
			t.Errorf("query config tpc: %q, want 1", out)
		}
	})
	t.Run("refused copy leaves no file", func(t *testing.T) {
		out, err := run(t, true, "xrdcp", "-f", "--tpc", "only", a.rootURL+"//store/missing.bin", b.rootURL+"//store/never.bin")
		if err == nil {
			t.Fatalf("copy of a missing source succeeded: %s", out)
		}
		noFile(t, filepath.Join(b.pools[0], "never.bin"))
		entries, _ := os.ReadDir(b.pools[0])
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	})
}

// TestXrdcpTPCCutSource: the source box dies in the middle of a root://
// TPC; the copy fails and the destination keeps nothing, neither under
// the final name nor as a temporary.
func TestXrdcpTPCCutSource(t *testing.T) {
	peers.Require(t, "xrdcp")
	a := startBox(t, 1, tpcAllowLoopback...)
	b := startBox(t, 1, tpcAllowLoopback...)
	writeRandom(t, filepath.Join(a.pools[0], "big.bin"), 768<<20)
	done := make(chan error, 1)
	go func() {
		_, err := run(t, true, "xrdcp", "-f", "--tpc", "only", a.rootURL+"//store/big.bin", b.rootURL+"//store/cut.bin")
		done <- err
	}()
	// Wait until data is arriving in the destination's temporary.
	deadline := time.Now().Add(60 * time.Second)
	for !tempGrowing(b.pools[0]) {
		if time.Now().After(deadline) {
			t.Fatal("the copy never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.proc.Kill()
	if err := <-done; err == nil {
		t.Fatal("xrdcp succeeded although its source died mid-copy")
	}
	noFile(t, filepath.Join(b.pools[0], "cut.bin"))
	entries, _ := os.ReadDir(b.pools[0])
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

// tempGrowing reports whether a hidden temporary in dir holds data.
func tempGrowing(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), ".") && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// TestXrdcpTPCRoots: with a roots:// source, the destination box reaches
// the source over TLS (XrdCl names the source's protocol in tpc.spr) and
// verifies its certificate: a box that trusts it copies, one that does
// not refuses and keeps nothing.
func TestXrdcpTPCRoots(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "openssl")
	bundle := tpcTrust(t)
	a := startBox(t, 1, tpcAllowLoopback...)
	b := startBox(t, 1, tpcAllowLoopback...)
	untrusting := filepath.Join(t.TempDir(), "empty.pem")
	os.WriteFile(untrusting, nil, 0o644)
	t.Setenv("SSL_CERT_FILE", untrusting)
	c := startBox(t, 1, tpcAllowLoopback...)
	trustCerts(t, bundle, a.certFile, b.certFile)

	caDir := t.TempDir()
	for i, bx := range []*box{a, b, c} {
		pem, err := os.ReadFile(bx.certFile)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(caDir, "box"+strconv.Itoa(i)+".pem"), pem, 0o644)
	}
	if out, err := exec.Command("openssl", "rehash", caDir).CombinedOutput(); err != nil {
		t.Fatalf("openssl rehash: %v: %s", err, out)
	}
	env := []string{"X509_CERT_DIR=" + caDir}
	data := writeRandom(t, filepath.Join(a.pools[0], "src.bin"), 3<<20+7)
	src := "roots://" + a.rootHost + "//store/src.bin"

	out, err := runEnv(t, env, "xrdcp", "-f", "--tpc", "only", src, "roots://"+b.rootHost+"//store/tls.bin")
	if err != nil {
		t.Fatalf("xrdcp --tpc only roots:// → roots://: %v\n%s", err, out)
	}
	sameFile(t, filepath.Join(b.pools[0], "tls.bin"), data)

	out, err = runEnv(t, env, "xrdcp", "-f", "--tpc", "only", src, c.rootURL+"//store/tls.bin")
	if err == nil || !strings.Contains(out, "certificate") {
		t.Errorf("a destination that does not trust the roots:// source: %v, want a certificate error\n%s", err, out)
	}
	noFile(t, filepath.Join(c.pools[0], "tls.bin"))
}
