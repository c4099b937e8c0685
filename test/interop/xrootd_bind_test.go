package interop

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestXrootdSubstreams downloads with `xrdcp -S 4` from xrootd 5.5 and
// from sitebox and counts, as the kernel sees them, the server's
// connections from the client and the bytes each carried: the main
// connection and 4 bound substreams, the data spread over the
// substreams. query config answers bind_max and pio_max as xrootd does.
func TestXrootdSubstreams(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "xrootd", "ss"} {
		peers.Require(t, tool)
	}
	const size = 48 << 20
	xdata := t.TempDir()
	src := writeRandom(t, filepath.Join(xdata, "big"), size)
	xhost := startXrootdOrigin(t, xdata)
	b := startBox(t, 1)
	os.WriteFile(filepath.Join(b.pools[0], "big"), src, 0o644)

	for _, s := range []struct{ name, host, path string }{
		{"xrootd", xhost, "/big"},
		{"sitebox", b.rootHost, "/store/big"},
	} {
		t.Run(s.name, func(t *testing.T) {
			for key, want := range map[string]string{"bind_max": "15", "pio_max": "5"} {
				if out, _ := run(t, false, "xrdfs", s.host, "query", "config", key); strings.TrimSpace(out) != want {
					t.Errorf("query config %s: %q, want %s as xrootd", key, out, want)
				}
			}
			checkSubstreams(t, s.name, s.host, "root://"+s.host+"/"+s.path, src, nil, s.name == "sitebox")
		})
	}
	// Over roots:// the substreams are TLS too.
	t.Run("sitebox roots", func(t *testing.T) {
		peers.Require(t, "openssl")
		ca := t.TempDir()
		cert, err := os.ReadFile(b.certFile)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ca, "box.pem"), cert, 0o644)
		if out, err := exec.Command("openssl", "rehash", ca).CombinedOutput(); err != nil {
			t.Fatalf("openssl rehash: %v %s", err, out)
		}
		checkSubstreams(t, "sitebox roots", b.rootHost, "roots://"+b.rootHost+"//store/big", src, []string{"X509_CERT_DIR=" + ca}, true)
	})
}

// checkSubstreams downloads url with xrdcp -S 4 and checks the data and
// that it came over the 4 substreams. For the reference server (strict
// false) two substreams carrying data show the method works: XrdCl at
// times binds one late against xrootd 5.5 and sends its share on the
// main connection, which is the peer's behaviour, not sitebox's.
func checkSubstreams(t *testing.T, name, host, url string, src []byte, env []string, strict bool) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "big")
	conns := copyCountingConns(t, host, url, dst, env)
	sameFile(t, dst, src)
	carrying := 0
	for peer, n := range conns {
		t.Logf("%s: connection from %s carried %d bytes", name, peer, n)
		if n > 1<<20 {
			carrying++
		}
	}
	wantConns, wantCarrying := 5, 4
	if !strict {
		wantConns, wantCarrying = 3, 2
	}
	if len(conns) < wantConns || carrying < wantCarrying {
		t.Errorf("%s: %d connections from xrdcp -S 4, %d carrying data; want at least %d and %d", name, len(conns), carrying, wantConns, wantCarrying)
	}
}

// ssBytes matches the bytes a socket sent in ss -ti's output.
var ssBytes = regexp.MustCompile(`bytes_sent:(\d+)`)

// copyCountingConns runs a rate-limited `xrdcp -S 4` from url to dst and
// samples the server's established connections (ss) until it ends:
// the bytes each client port was sent, at most.
func copyCountingConns(t *testing.T, host, url, dst string, env []string) map[string]int64 {
	t.Helper()
	_, port, _ := strings.Cut(host, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xrdcp", "-S", "4", "--xrate", "12M", "-f", url, dst)
	cmd.Env = append(append(os.Environ(), "XRD_REQUESTTIMEOUT=30", "XRD_CONNECTIONRETRY=1", "XRD_STREAMTIMEOUT=30",
		// 2 MiB chunks: enough of them to reach every substream, also those
		// whose TLS handshake finishes after the first reads went out.
		"XRD_CPCHUNKSIZE=2097152"), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	conns := map[string]int64{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("xrdcp -S 4 %s: %v\n%s", url, err, out.String())
			}
			return conns
		case <-tick.C:
			sampleConns(port, conns)
		}
	}
}

// sampleConns records, for each established connection to port, the
// most bytes the server has sent on it.
func sampleConns(port string, conns map[string]int64) {
	out, err := exec.Command("ss", "-tinH", "state", "established", "( sport = :"+port+" )").Output()
	if err != nil {
		return
	}
	var peer string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 4 && strings.HasSuffix(f[2], ":"+port) {
			peer = f[3]
			continue
		}
		if m := ssBytes.FindStringSubmatch(line); m != nil && peer != "" {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			conns[peer] = max(conns[peer], n)
		}
	}
}
