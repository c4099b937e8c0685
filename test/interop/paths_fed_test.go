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

// TestTrailingSlashFederation: through a redirector and through a cache,
// a name ending in "/" still names a directory or nothing. Side by side:
// an xrootd 5.5 manager (cmsd) with one data server and an XCache in
// front of it, and a sitebox director with one origin and a sitebox
// cache in front of it. Redirected requests reach the server that acts
// with the "/" kept (a root:// client resends its path; an https
// redirect's Location ends as the request did); a cache checks against
// what its upstream holds.
func TestTrailingSlashFederation(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "xrootd", "cmsd", "curl"} {
		peers.Require(t, tool)
	}
	xdata := t.TempDir()
	seedSlashTree(t, xdata)
	mp, _ := peers.FreePort()
	cp, _ := peers.FreePort()
	dp, _ := peers.FreePort()
	cl, err := peers.StartCluster(context.Background(), peers.ClusterConfig{
		DataDir: xdata, WorkDir: t.TempDir(), ManagerPort: mp, CmsPort: cp, DataPort: dp,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	xp, _ := peers.FreePort()
	xc, err := peers.StartXcache(context.Background(), peers.XcacheConfig{
		Origin: cl.ServerAddr, Port: xp, Name: "interop-slash-" + strconv.Itoa(xp), WorkDir: t.TempDir(), CacheDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(xc.Stop)

	dir := startFedNode(t, "dir", "A", "[director]\nenabled = true\nlocate_timeout = \"2s\"\n")
	pool := t.TempDir()
	seedSlashTree(t, pool)
	origin := startFedNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n"+advertiseTo(dir, "500ms"))
	cache := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{origin.rootURL}}}})
	waitFor(t, 15*time.Second, "the origin in the director's registry", func() bool {
		_, err := run(t, true, "xrdfs", dir.rootHost, "stat", "/store/f")
		return err == nil
	})

	for _, s := range []struct{ name, redirector, cache, prefix, data string }{
		{"xrootd", cl.ManagerAddr, "127.0.0.1:" + strconv.Itoa(xp), "", xdata},
		{"sitebox", dir.rootHost, cache.rootHost, "/store", pool},
	} {
		t.Run(s.name, func(t *testing.T) {
			p := func(n string) string { return s.prefix + "/" + n }
			// The data server answers 3005; XrdCl takes that back to the
			// redirector, which has no other server to offer: 3011.
			for _, front := range []struct{ host, code string }{{s.redirector, "3011"}, {s.cache, "3005"}} {
				wantCode(t, "stat f/ at "+front.host, front.code, "xrdfs", front.host, "stat", p("f/"))
				wantCode(t, "xrdcp of f/ from "+front.host, front.code, "xrdcp", "-f", "root://"+front.host+"/"+p("f/"), filepath.Join(t.TempDir(), "out"))
				if out, _ := run(t, false, "xrdfs", front.host, "ls", p("into/")); !strings.Contains(out, p("into/kept")) {
					t.Errorf("ls %s at %s: %q", p("into/"), front.host, out)
				}
			}
			wantCode(t, "rm f/ through the redirector", "3011", "xrdfs", s.redirector, "rm", p("f/"))
			up := filepath.Join(t.TempDir(), "up")
			os.WriteFile(up, []byte("new\n"), 0o644)
			wantCode(t, "xrdcp -f to f/ through the redirector", "3011", "xrdcp", "-f", up, "root://"+s.redirector+"/"+p("f/"))
			run(t, false, "xrdcp", up, "root://"+s.redirector+"/"+p("into/"))
			sameFile(t, filepath.Join(s.data, "into", "up"), []byte("new\n"))
			sameFile(t, filepath.Join(s.data, "f"), []byte("hello"))
		})
	}

	t.Run("https", func(t *testing.T) {
		// The director's redirect keeps the "/" and the origin refuses.
		loc := curlRedirect(t, dir.httpsURL+"/store/f/", "-X", "PUT", "--data-binary", "bye")
		if loc, _, _ = strings.Cut(loc, "?"); !strings.HasSuffix(loc, "/store/f/") {
			t.Errorf("PUT /store/f/ at the director redirects to %q, want the path ending in /", loc)
		}
		for _, c := range []struct{ front, method string }{
			{dir.httpsURL, "PUT"}, {dir.httpsURL, "DELETE"}, {dir.httpsURL, "GET"},
			{cache.httpsURL, "GET"}, {cache.httpsURL, "PROPFIND"},
		} {
			args := []string{"-k", "-L", "-X", c.method}
			if c.method == "PUT" {
				args = append(args, "--data-binary", "bye")
			}
			if got := curlStatus(t, dir.certFile, c.front+"/store/f/", args...); got != 409 {
				t.Errorf("%s /store/f/ at %s (redirects followed): %d, want 409", c.method, c.front, got)
			}
		}
		if got := curlStatus(t, dir.certFile, cache.httpsURL+"/store/into/", "-k", "-X", "PROPFIND", "-H", "Depth: 1"); got != 207 {
			t.Errorf("PROPFIND /store/into/ at the cache: %d, want 207", got)
		}
		sameFile(t, filepath.Join(pool, "f"), []byte("hello"))
	})
}

// seedSlashTree puts a file f ("hello") and a directory into holding a
// file kept in data.
func seedSlashTree(t *testing.T, data string) {
	t.Helper()
	writeRandom(t, filepath.Join(data, "into", "kept"), 10)
	if err := os.WriteFile(filepath.Join(data, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantCode runs a real client that must fail with the kXR code code.
func wantCode(t *testing.T, what, code string, name string, args ...string) {
	t.Helper()
	out, err := run(t, true, name, args...)
	if err == nil || !strings.Contains(out, "["+code+"]") {
		t.Errorf("%s: %v, want [%s]\n%s", what, err, code, out)
	}
}

// curlRedirect sends one request with curl, not following redirects,
// and returns where it was redirected to.
func curlRedirect(t *testing.T, url string, args ...string) string {
	t.Helper()
	out, _ := run(t, false, "curl", append([]string{"-sS", "-k", "-o", "/dev/null", "-w", "%{redirect_url}"}, append(args, url)...)...)
	return strings.TrimSpace(out)
}
