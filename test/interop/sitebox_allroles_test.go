package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/jobs"
	"sitebox/test/peers"
)

// siteBoxConf is the seed's box in one config: an origin (/local), a
// cache (/store, filled through the box's own director) and a site
// director on listeners of its own; advertise is its [advertise] table,
// jobs are added by the caller.
func siteBoxConf(t *testing.T, pool string, dirRoot, dirHTTPS int, advertise string) string {
	t.Helper()
	// Its job router opens t.TempDir's private parent to slot users: the
	// pool and cache dir (0755 below it) must be closed to them.
	cacheDir := t.TempDir()
	for _, d := range []string{pool, cacheDir} {
		os.Chmod(d, 0o750)
	}
	return "[[export]]\nprefix = \"/local\"\npools = [" + quote(pool) + "]\n" +
		"[cache]\ndir = " + quote(cacheDir) + "\nram = \"256MiB\"\ntrusted_redirects = [\"127.0.0.1\"]\n" +
		"[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://127.0.0.1:" + strconv.Itoa(dirRoot) + "\"]\n" +
		"[director]\nenabled = true\nroot_addr = \"127.0.0.1:" + strconv.Itoa(dirRoot) + "\"\nhttps_addr = \"127.0.0.1:" + strconv.Itoa(dirHTTPS) + "\"\n" +
		"startup_wait = \"2s\"\n" + advertise
}

// TestFederationSiteBoxInOneProcess: one `sitebox serve` with one config
// is origin, cache, site director and job router. xrdcp and curl read
// through its director from its origin (a file of the site) and from its
// cache (a file only at a remote box, which joined the director with
// `sitebox federation join`/`approve`); a job runs on it. Upstream, a
// regional director sees the box as one director with its origin, cache
// and member below it, and sends clients straight to them.
func TestFederationSiteBoxInOneProcess(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "curl"} {
		peers.Require(t, tool)
	}
	pool := t.TempDir()
	local := writeRandom(t, filepath.Join(pool, "local.root"), 3<<20)
	dirRoot, _ := peers.FreePort()
	dirHTTPS, _ := peers.FreePort()
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\nstartup_wait = \"1s\"\n")
	site := startIssuerNode(t, "t3", "T3", siteBoxConf(t, pool, dirRoot, dirHTTPS, advertiseTo(region, "1s"))+jobsConf(t, []string{"sbxslot20"}, "cpus = 1\n"))
	// The director as clients and remote boxes see it.
	dir := &fedNode{box: &box{
		rootHost: "127.0.0.1:" + strconv.Itoa(dirRoot), rootURL: "root://127.0.0.1:" + strconv.Itoa(dirRoot),
		httpsURL: "https://127.0.0.1:" + strconv.Itoa(dirHTTPS), certFile: site.certFile, state: site.state,
	}, name: "t3", site: "T3"}

	// A box at another site joins the site director.
	bPool := t.TempDir()
	remote := writeRandom(t, filepath.Join(bPool, "remote.root"), 5<<20+3)
	bOrigin := startFedNode(t, "b-origin", "B", "[[export]]\nprefix = \"/store\"\npools = ["+quote(bPool)+"]\n"+advertiseTo(dir, "1s"))

	fedView := func(at *fedNode) *director.Federation {
		out, _ := run(t, false, siteboxBin, "federation", at.httpsURL, "--ca", at.certFile, "--json")
		var f director.Federation
		if err := json.Unmarshal([]byte(out), &f); err != nil {
			t.Fatalf("federation --json: %v: %s", err, out)
		}
		return &f
	}
	waitFor(t, 15*time.Second, "the box's origin and cache and the remote origin at the director", func() bool {
		roles := map[string]string{}
		for _, s := range fedView(dir).Servers {
			roles[s.Name] = s.Role + " " + s.Root
		}
		return roles["t3-origin"] == "origin "+site.rootHost && roles["t3-cache"] == "cache "+site.rootHost && roles["b-origin"] == "origin "+bOrigin.rootHost
	})
	// The region: the box's director, and below it its origin and cache
	// and the member that joined it.
	waitFor(t, 15*time.Second, "the site box and the servers below it at the regional director", func() bool {
		seen := map[string]string{}
		for _, s := range fedView(region).Servers {
			seen[s.Name] = s.Role + " " + s.Root + " " + s.Via
		}
		return seen["t3"] == "director "+dir.rootHost+" " && seen["t3-origin"] == "origin "+site.rootHost+" t3" &&
			seen["t3-cache"] == "cache "+site.rootHost+" t3" && seen["b-origin"] == "origin "+bOrigin.rootHost+" t3"
	})
	out := t.TempDir()

	// root://: a file of the site from the box's origin, a remote file
	// through the box's cache (which asks the same director, as a cache).
	run(t, false, "xrdcp", "-f", dir.rootURL+"//local/local.root", out+"/local")
	sameFile(t, out+"/local", local)
	run(t, false, "xrdcp", "-f", dir.rootURL+"//store/remote.root", out+"/remote")
	sameFile(t, out+"/remote", remote)
	waitFor(t, 10*time.Second, "the remote file in the box's cache", func() bool {
		ls, _ := run(t, false, siteboxBin, "cache", "ls", "--state-dir", site.state)
		return strings.Contains(ls, "/store/remote.root")
	})
	run(t, false, "xrdcp", "-f", region.rootURL+"//local/local.root", out+"/local-via-region")
	sameFile(t, out+"/local-via-region", local)
	loc, _ := run(t, false, "xrdfs", dir.rootHost, "locate", "/local/local.root")
	if !strings.Contains(loc, site.rootHost) {
		t.Errorf("locate /local/local.root = %q; want the box's data listener %s", loc, site.rootHost)
	}

	// https://: curl follows the director's 307 to the data listener; one
	// CA file (the box's certificate) covers both.
	for _, c := range []struct {
		path string
		want []byte
	}{{"/local/local.root", local}, {"/store/remote.root", remote}} {
		got, _ := run(t, false, "curl", "-sS", "-L", "--max-time", "60", "--cacert", site.certFile, "-o", out+"/https", "-w", "%{http_code} %{num_redirects} %{url_effective}", dir.httpsURL+c.path)
		t.Logf("curl -L %s: %s", c.path, got)
		sameFile(t, out+"/https", c.want)
		if !strings.Contains(got, "200 1 "+site.httpsURL) {
			t.Errorf("curl %s: %q; want one redirect to the data listener %s", c.path, got, site.httpsURL)
		}
	}

	// A job submitted to the same box.
	u := &jobUser{t: t, n: site, token: site.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	ids := u.submit("one.sub", "executable = /bin/true\nqueue 1\n")
	u.wait(ids[0], jobs.Completed, 60*time.Second)

	// One process served it all.
	if n := strings.Count(site.proc.Log.String(), "serving director root://"); n != 1 {
		t.Errorf("the box's log names the director's root:// listener %d times", n)
	}
	if _, err := os.Stat(filepath.Join(site.state, "sitebox.toml")); err != nil {
		t.Fatal(err)
	}
}
