package interop

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
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
			start := time.Now()
			code, body := curl(c.httpsURL + p)
			t.Logf("GET %s: %s after %v: %q", p, code, time.Since(start), body)
			if code != "502" || !strings.Contains(body, "unavailable") || time.Since(start) > 5*time.Second {
				t.Errorf("GET from a route whose upstream is down: %s %q after %v, want 502 Bad Gateway at once", code, body, time.Since(start))
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
	return runEnvDir(t, env, "", name, args...)
}

// runEnvDir is runEnv in a working directory ("": the test's).
func runEnvDir(t *testing.T, env []string, dir, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
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

// TestCacheUpstreamCut: the link to the first upstream goes down in the
// middle of an xrdcp through the cache. With a second upstream the copy
// either completes byte-identical (failover) or fails with an error; with
// only one it fails cleanly, and once the link is back the cache serves
// the file. Never short or wrong data.
func TestCacheUpstreamCut(t *testing.T) {
	peers.Require(t, "xrdcp")
	tpBin := peers.RequireToxiproxy(t)
	ctx := context.Background()
	tp, err := peers.StartToxiproxy(ctx, tpBin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	o := startBox(t, 1)
	const size = 48 * mib
	want := writeRandom(t, filepath.Join(o.pools[0], "cut.bin"), size)
	want2 := writeRandom(t, filepath.Join(o.pools[0], "cut2.bin"), size)
	first, err := tp.Proxy(ctx, "first", o.rootHost)
	if err != nil {
		t.Fatal(err)
	}
	single, err := tp.Proxy(ctx, "single", o.rootHost)
	if err != nil {
		t.Fatal(err)
	}
	second := startRelay(t, o.rootHost) // counts what the second upstream serves
	for _, l := range []*peers.Link{first, single} {
		// 1 MB/s per connection, 16 streams: the file takes about 3 s.
		if err := l.SetBandwidth(ctx, 1_000_000); err != nil {
			t.Fatal(err)
		}
	}
	conf := cacheConf{dir: t.TempDir(), routes: []cacheRoute{
		{"/store", []string{"root://" + first.Addr, "root://" + second.addr}},
		{"/single", []string{"root://" + single.Addr + "//store"}},
	}}
	c := startCache(t, conf)
	dir := t.TempDir()

	// copyCut runs xrdcp of name and calls cut once a few blocks of it are
	// cached, returning xrdcp's outcome.
	copyCut := func(name string, cut func() error, dst string) (string, error) {
		t.Helper()
		type result struct {
			out string
			err error
		}
		res := make(chan result, 1)
		go func() {
			out, err := runEnv(t, []string{"XRD_TIMEOUTRESOLUTION=1"}, "xrdcp", "-f", c.rootURL+"/"+name, dst)
			res <- result{out, err}
		}()
		cached := filepath.Join(conf.dir, "data", name)
		waitFor(t, 20*time.Second, "4 blocks of "+name+" cached", func() bool { return allocated(t, cached) >= 4*mib })
		if n := allocated(t, cached); n >= size {
			t.Fatalf("%s was all cached (%d bytes) before the cut", name, n)
		}
		if err := cut(); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-res:
			return r.out, r.err
		case <-time.After(60 * time.Second):
			t.Fatalf("xrdcp of %s still running 60 s after its upstream was cut", name)
			return "", nil
		}
	}

	t.Run("failover", func(t *testing.T) {
		start := time.Now()
		out, err := copyCut("/store/cut.bin", func() error { return first.SetEnabled(ctx, false) }, dir+"/failover")
		fromSecond := second.reset()
		t.Logf("xrdcp after the cut: %v in %v, %d bytes from the second upstream %s", err, time.Since(start), fromSecond, strings.TrimSpace(out))
		if err == nil {
			sameFile(t, dir+"/failover", want)
			if fromSecond < mib {
				t.Errorf("the copy succeeded with %d bytes from the second upstream: the cut came too late", fromSecond)
			}
		} else if !strings.Contains(out, "ERROR") {
			t.Errorf("xrdcp failed without an error message: %v %q", err, out)
		}
		// Whatever happened to that copy, the next one is whole.
		run(t, false, "xrdcp", "-f", c.rootURL+"//store/cut.bin", dir+"/again")
		sameFile(t, dir+"/again", want)
	})

	t.Run("single upstream", func(t *testing.T) {
		start := time.Now()
		out, err := copyCut("/single/cut.bin", func() error { return single.SetEnabled(ctx, false) }, dir+"/single")
		t.Logf("xrdcp after the cut: %v in %v %s", err, time.Since(start), strings.TrimSpace(out))
		if err == nil {
			// Possible only if everything was already fetched.
			sameFile(t, dir+"/single", want)
		} else if !strings.Contains(out, "ERROR") {
			t.Errorf("xrdcp failed without an error message: %v %q", err, out)
		}
		if err := single.SetEnabled(ctx, true); err != nil {
			t.Fatal(err)
		}
		if err := single.RemoveToxics(ctx); err != nil {
			t.Fatal(err)
		}
		run(t, false, "xrdcp", "-f", c.rootURL+"//single/cut.bin", dir+"/single-again")
		sameFile(t, dir+"/single-again", want)
	})
	// A cut that heals at once (connections dropped, new ones accepted):
	// the cache re-dials and the copy completes.
	t.Run("transient cut", func(t *testing.T) {
		if err := single.SetBandwidth(ctx, 1_000_000); err != nil {
			t.Fatal(err)
		}
		out, err := copyCut("/single/cut2.bin", func() error { return single.Cut(ctx) }, dir+"/transient")
		if err != nil {
			t.Fatalf("xrdcp across a transient cut: %v %s", err, out)
		}
		sameFile(t, dir+"/transient", want2)
	})
}
