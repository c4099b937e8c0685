package interop

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/peers"
)

// TestCacheBadInput: paths outside every cached prefix are not found,
// writes are refused with an error that says why, and an upstream that is
// down or never answers gives a clean error, not a hang; the cache keeps
// serving the good route throughout.
func TestCacheBadInput(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "curl")
	o := startBox(t, 1)
	want := writeRandom(t, filepath.Join(o.pools[0], "ok.bin"), 3*mib)
	down, _ := peers.FreePort() // nothing listens there
	hole := blackHole(t)        // accepts connections, never answers
	c := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{
		{"/store", []string{o.rootURL}},
		{"/down", []string{"root://127.0.0.1:" + strconv.Itoa(down)}},
		{"/downhttps", []string{"https://127.0.0.1:" + strconv.Itoa(down)}},
		{"/hole", []string{"root://" + hole}},
	}})
	dir := t.TempDir()
	os.WriteFile(dir+"/up", []byte("upload"), 0o644)
	// XRootD clients check their timeouts every XRD_TIMEOUTRESOLUTION
	// seconds (15 by default).
	xrdcp := func(timeout int, args ...string) (string, error, time.Duration) {
		start := time.Now()
		out, err := runEnv(t, []string{"XRD_REQUESTTIMEOUT=" + strconv.Itoa(timeout), "XRD_STREAMTIMEOUT=" + strconv.Itoa(timeout), "XRD_TIMEOUTRESOLUTION=1"}, "xrdcp", args...)
		return out, err, time.Since(start)
	}
	curl := func(args ...string) (code, body string) {
		out, _ := runEnv(t, nil, "curl", append([]string{"-sS", "--max-time", "20", "-w", "\n%{http_code}", "--cacert", c.certFile}, args...)...)
		out = strings.TrimSpace(out)
		i := strings.LastIndexByte(out, '\n')
		return out[i+1:], out[:max(i, 0)]
	}

	t.Run("outside the prefixes", func(t *testing.T) {
		for _, p := range []string{"/other/ok.bin", "/store/missing.bin", "/storex/ok.bin"} {
			out, err, _ := xrdcp(10, "-f", c.rootURL+"/"+p, dir+"/x")
			if err == nil || !strings.Contains(out, "3011") {
				t.Errorf("xrdcp %s: %v %q, want not found [3011]", p, err, out)
			}
			if code, body := curl(c.httpsURL + p); code != "404" {
				t.Errorf("GET %s: %s %q, want 404", p, code, body)
			}
		}
	})

	t.Run("upload over root", func(t *testing.T) {
		out, err, _ := xrdcp(10, "-f", dir+"/up", c.rootURL+"//store/new.bin")
		if err == nil || !strings.Contains(out, "3025") || !strings.Contains(out, "cache") {
			t.Errorf("upload through the cache: %v %q, want a read-only refusal [3025] that names the cache", err, out)
		}
		if _, err := os.Stat(filepath.Join(o.pools[0], "new.bin")); err == nil {
			t.Error("a refused upload reached the origin")
		}
	})

	t.Run("upload over https", func(t *testing.T) {
		code, body := curl("-T", dir+"/up", c.httpsURL+"/store/new.bin")
		// As for a read-only export: 403 (or 405), saying why.
		if code != "403" && code != "405" || !strings.Contains(body, "cache") && !strings.Contains(body, "read-only") {
			t.Errorf("PUT through the cache: %s %q, want 403 or 405 saying the path is cached (read-only)", code, body)
		}
		if _, err := os.Stat(filepath.Join(o.pools[0], "new.bin")); err == nil {
			t.Error("a refused upload reached the origin")
		}
	})

	t.Run("upstream down", func(t *testing.T) {
		for _, p := range []string{"/down/x.bin", "/downhttps/x.bin"} {
			out, err, took := xrdcp(10, "-f", c.rootURL+"/"+p, dir+"/x")
			t.Logf("%s: %v after %v: %s", p, err, took, strings.TrimSpace(out))
			if err == nil || took > 5*time.Second || !strings.Contains(out, "refused") {
				t.Errorf("xrdcp from a route whose upstream is down: %v after %v: %s", err, took, out)
			}
		}
	})

	// The cache is still up and serves the good route.
	if _, err, _ := xrdcp(10, "-f", c.rootURL+"//store/ok.bin", dir+"/ok"); err != nil {
		t.Fatalf("good route after the bad input: %v", err)
	}
	sameFile(t, dir+"/ok", want)

	t.Run("upstream hangs", func(t *testing.T) {
		out, err, took := xrdcp(3, "-f", c.rootURL+"//hole/x.bin", dir+"/x")
		t.Logf("/hole/x.bin: %v after %v: %s", err, took, strings.TrimSpace(out))
		if err == nil || took > 10*time.Second {
			t.Errorf("xrdcp from a route whose upstream never answers: %v after %v", err, took)
		}
		if _, err, _ := xrdcp(10, "-f", c.rootURL+"//store/ok.bin", dir+"/ok2"); err != nil {
			t.Errorf("good route while an upstream hangs: %v", err)
		}
		// The client gave up: nothing should hold the cache's shutdown
		// (Stop sends SIGTERM and SIGKILLs after 5 s).
		start := time.Now()
		c.proc.Stop()
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("SIGTERM took %v to stop the cache: a request whose client left still waits on the hung upstream", took)
		}
	})
}

// runEnv runs a client like run, with env added (it wins over run's
// defaults), never failing the test itself.
func runEnv(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(append(os.Environ(), "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=1", "XRD_STREAMTIMEOUT=20"), env...)
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// blackHole listens on 127.0.0.1 and accepts connections that never get
// a byte back: a server that hangs.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
