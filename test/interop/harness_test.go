// Package interop tests sitebox against the real programs of the field:
// XRootD 5.5's xrdcp, xrdfs and Python bindings, uproot, curl and the xrootd
// server itself. Under CI=true a missing program fails its test.
package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
)

var siteboxBin string

func TestMain(m *testing.M) {
	siteboxBin = os.Getenv("SITEBOX_BIN")
	if siteboxBin == "" {
		dir, err := os.MkdirTemp("", "sitebox-interop-")
		if err != nil {
			panic(err)
		}
		siteboxBin = filepath.Join(dir, "sitebox")
		out, err := exec.Command("go", "build", "-o", siteboxBin, "sitebox/cmd/sitebox").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build sitebox: %v\n%s", err, out)
			os.Exit(1)
		}
		code := m.Run()
		gridPKI.Remove()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	code := m.Run()
	gridPKI.Remove()
	os.Exit(code)
}

// box is a sitebox origin running as a child process.
type box struct {
	rootURL  string // root://127.0.0.1:PORT
	httpsURL string // https://127.0.0.1:PORT
	rootHost string // 127.0.0.1:PORT for xrdfs
	certFile string
	state    string // state dir: admin socket, TLS certificate
	pools    []string
	proc     *peers.Process
	args     []string // the command line it was started with
}

// startBox serves /store from nPools pools plus a read-only /pub.
func startBox(t *testing.T, nPools int, extra ...string) *box {
	t.Helper()
	b := &box{}
	for range nPools {
		b.pools = append(b.pools, t.TempDir())
	}
	pub := t.TempDir()
	os.WriteFile(filepath.Join(pub, "readme.txt"), []byte("public data\n"), 0o644)
	state := t.TempDir()
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	args := append([]string{"serve", "--export", "/store=" + strings.Join(b.pools, ","), "--export", "/pub=" + pub + ":ro",
		"--root-addr", "127.0.0.1:" + strconv.Itoa(rp), "--https-addr", "127.0.0.1:" + strconv.Itoa(hp),
		"--state-dir", state, "--log-level", "warn"}, extra...)
	p, err := peers.StartSitebox(context.Background(), siteboxBin, []int{rp, hp}, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("sitebox log:\n%s", p.Log.String())
		}
	})
	b.proc, b.args = p, args
	b.rootHost = "127.0.0.1:" + strconv.Itoa(rp)
	b.rootURL = "root://" + b.rootHost
	b.httpsURL = "https://127.0.0.1:" + strconv.Itoa(hp)
	b.certFile = filepath.Join(state, "tls", "cert.pem")
	return b
}

// run executes a real client with XRootD's timeouts shortened, returning
// combined output; it fails the test on a non-zero exit unless allowFail.
func run(t *testing.T, allowFail bool, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120e9)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=1", "XRD_STREAMTIMEOUT=20")
	out, err := cmd.CombinedOutput()
	if err != nil && !allowFail {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), err
}

func writeRandom(t *testing.T, path string, size int) []byte {
	t.Helper()
	data := make([]byte, size)
	rand.Read(data)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, sha256 %x; want %d bytes, sha256 %x", path, len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
	}
}

func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("SITEBOX_PYTHON")
	if py == "" {
		py, _ = filepath.Abs("../../.venv/bin/python")
	}
	return peers.RequireFile(t, py, "the Python venv with XRootD and uproot")
}
