package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/cache"
	"sitebox/internal/director"
	"sitebox/test/peers"
)

// regexpDown matches originB's line in `sitebox federation` or `fleet`
// once it is listed as down.
var regexpDown = regexp.MustCompile(`originB.*DOWN \(`)

// TestFederation is the topology of the federation issue on loopback:
// site A (origin), site B (origin with replicas of some A files), site C
// (director + cache, no data), a regional director over all three, and
// two real XRootD servers standing in for the CMS and ATLAS federations.
// Clients are real: xrdcp, xrdfs, curl, uproot, sitebox get.
func TestFederation(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "curl", "xrootd"} {
		peers.Require(t, tool)
	}
	py := python(t)

	// The VO federations: real xrootd servers, each with its own file.
	cmsData, atlasData := t.TempDir(), t.TempDir()
	cmsWant := writeRandom(t, filepath.Join(cmsData, "store/vo/cms.bin"), 300_000)
	atlasWant := writeRandom(t, filepath.Join(atlasData, "store/vo/atlas.bin"), 200_000)
	cmsHost, atlasHost := startXrootdOrigin(t, cmsData), startXrootdOrigin(t, atlasData)
	// A plain XRootD server that cannot advertise, listed in the regional
	// director's config and probed.
	legacyData := t.TempDir()
	legacyWant := writeRandom(t, filepath.Join(legacyData, "legacy/old.bin"), 150_000)
	legacyHost := startXrootdOrigin(t, legacyData)

	region := startFedNode(t, "region", "R", "[director]\nenabled = true\nlocate_timeout = \"2s\"\ndown_wait = \"3s\"\n"+
		"[[director.server]]\nname = \"legacy\"\nsite = \"L\"\nroot = \"root://"+legacyHost+"\"\nprefixes = [\"/legacy\"]\n"+
		"[director.vo]\ncms = \"root://"+cmsHost+"\"\natlas = \"root://"+atlasHost+"\"\n")

	poolA, poolB := t.TempDir(), t.TempDir()
	rep := writeRandom(t, filepath.Join(poolA, "rep.bin"), 3<<20)
	os.WriteFile(filepath.Join(poolB, "rep.bin"), rep, 0o644)
	onlyA := writeRandom(t, filepath.Join(poolA, "onlyA.bin"), 1<<20)
	onlyB := writeRandom(t, filepath.Join(poolB, "onlyB.bin"), 2<<20+17)
	writeRandom(t, filepath.Join(poolB, "onlyB2.bin"), 100_000)
	tree := filepath.Join(t.TempDir(), "tree.root")
	makeTree(t, py, tree, 3, 20_000, 4)
	treeData, _ := os.ReadFile(tree)
	os.WriteFile(filepath.Join(poolB, "tree.root"), treeData, 0o644)

	export := func(pool string) string {
		return "[[export]]\nprefix = \"/store\"\npools = [" + strconv.Quote(pool) + "]\n"
	}
	originA := startFedNode(t, "originA", "A", export(poolA)+advertiseTo(region, "500ms"))
	originB := startFedNode(t, "originB", "B", export(poolB)+advertiseTo(region, "500ms"))
	dirC := startFedNode(t, "directorC", "C", "[director]\nenabled = true\n"+advertiseTo(region, "500ms"))
	cacheDir := t.TempDir()
	// The cache follows the director's redirects only to hosts it is told
	// to trust: here every data server runs on this host.
	cacheC := startFedNode(t, "cacheC", "C", "[cache]\ndir = "+strconv.Quote(cacheDir)+
		"\ntrusted_redirects = [\"127.0.0.1\"]\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://"+region.rootHost+"\"]\n"+advertiseTo(dirC, "500ms"))

	fedView := func() *director.Federation {
		out, _ := run(t, false, siteboxBin, "federation", region.httpsURL, "--ca", region.certFile, "--json")
		var f director.Federation
		if err := json.Unmarshal([]byte(out), &f); err != nil {
			t.Fatalf("federation --json: %v: %s", err, out)
		}
		return &f
	}
	waitFor(t, 10*time.Second, "every server in the regional registry", func() bool {
		names := map[string]bool{}
		for _, s := range fedView().Servers {
			names[s.Name] = true
		}
		return names["originA"] && names["originB"] && names["directorC"] && names["cacheC"]
	})
	tree1, _ := run(t, false, siteboxBin, "federation", region.httpsURL, "--ca", region.certFile)
	t.Logf("sitebox federation:\n%s", tree1)
	for _, want := range []string{"site A", "site B", "site C", "originA", "cacheC (via directorC)", "ok (seen"} {
		if !strings.Contains(tree1, want) {
			t.Errorf("federation view lacks %q", want)
		}
	}
	dir := t.TempDir()
	bundle := certBundle(t, region, originA, originB, dirC, cacheC)
	cachedPaths := func() map[string]int64 {
		out, _ := run(t, false, siteboxBin, "cache", "ls", "--json", "--state-dir", cacheC.state)
		var ents []cache.EntryInfo
		json.Unmarshal([]byte(out), &ents)
		m := map[string]int64{}
		for _, e := range ents {
			m[e.Path] = e.Size
		}
		return m
	}

	t.Run("file only at B via C's cache", func(t *testing.T) {
		run(t, false, "xrdcp", "-f", dirC.rootURL+"//store/onlyB.bin", dir+"/onlyB")
		sameFile(t, dir+"/onlyB", onlyB)
		if got := cachedPaths()["/store/onlyB.bin"]; got != int64(len(onlyB)) {
			t.Errorf("C's cache does not hold /store/onlyB.bin after the read (entries %v)", cachedPaths())
		}
		// curl follows the 307s: director C → cache C.
		out, _ := run(t, false, "curl", "-sS", "-L", "--cacert", bundle, "-o", dir+"/onlyB-https", "-w", "%{http_code} %{num_redirects}", dirC.httpsURL+"/store/onlyB.bin")
		sameFile(t, dir+"/onlyB-https", onlyB)
		t.Logf("curl -L: %s", out)
		run(t, false, siteboxBin, "get", "--ca", bundle, dirC.rootURL+"//store/onlyA.bin", dir+"/onlyA")
		sameFile(t, dir+"/onlyA", onlyA)
		uprootSame(t, py, tree, dirC.rootURL+"//store/tree.root", dirC.httpsURL+"/store/tree.root", bundle)
	})

	t.Run("VO federation fallback", func(t *testing.T) {
		run(t, false, "xrdcp", "-f", dirC.rootURL+"//store/vo/cms.bin?vo=cms", dir+"/cms")
		sameFile(t, dir+"/cms", cmsWant)
		run(t, false, "xrdcp", "-f", dirC.rootURL+"//store/vo/atlas.bin?vo=atlas", dir+"/atlas")
		sameFile(t, dir+"/atlas", atlasWant)
		// The CMS federation has no ATLAS file: asked with vo=cms, it fails.
		out, err := run(t, true, "xrdcp", "-f", region.rootURL+"//store/vo/atlas.bin?vo=cms", dir+"/wrong")
		if err == nil {
			t.Errorf("atlas file with vo=cms was found: %s", out)
		}
		// Straight at the regional director, no cache: redirected to the VO.
		run(t, false, "xrdcp", "-f", region.rootURL+"//store/vo/cms.bin?vo=cms", dir+"/cms2")
		sameFile(t, dir+"/cms2", cmsWant)
	})

	t.Run("locate and merged listing", func(t *testing.T) {
		out, _ := run(t, false, "xrdfs", region.rootHost, "locate", "/store/rep.bin")
		if !strings.Contains(out, originA.rootHost) || !strings.Contains(out, originB.rootHost) {
			t.Errorf("xrdfs locate shows %q, want both replicas (%s, %s)", out, originA.rootHost, originB.rootHost)
		}
		out, _ = run(t, false, "xrdfs", region.rootHost, "ls", "/store")
		for _, f := range []string{"onlyA.bin", "onlyB.bin", "rep.bin", "tree.root"} {
			if !strings.Contains(out, f) {
				t.Errorf("merged listing lacks %s:\n%s", f, out)
			}
		}
	})

	t.Run("static XRootD server and the sitebox CLI", func(t *testing.T) {
		run(t, false, "xrdcp", "-f", region.rootURL+"//legacy/old.bin", dir+"/legacy")
		sameFile(t, dir+"/legacy", legacyWant)
		run(t, false, siteboxBin, "get", region.rootURL+"//legacy/old.bin", dir+"/legacy2")
		sameFile(t, dir+"/legacy2", legacyWant)
		var legacy *director.Server
		for _, s := range fedView().Servers {
			if s.Name == "legacy" {
				legacy = &s
			}
		}
		if legacy == nil || !legacy.Static || legacy.Down {
			t.Errorf("federation view of the static server: %+v", legacy)
		}
		out, _ := run(t, false, siteboxBin, "stat", region.rootURL+"//store/onlyB.bin")
		if !strings.Contains(out, strconv.Itoa(len(onlyB))) {
			t.Errorf("sitebox stat through the director: %s", out)
		}
		for _, u := range []string{region.rootURL + "//store", region.httpsURL + "/store"} {
			out, _ = run(t, false, siteboxBin, "ls", "--ca", bundle, u)
			for _, f := range []string{"onlyA.bin", "onlyB.bin", "rep.bin", "tree.root"} {
				if !strings.Contains(out, f) {
					t.Errorf("sitebox ls %s lacks %s:\n%s", u, f, out)
				}
			}
		}
	})

	t.Run("redirect loop is stopped", func(t *testing.T) {
		l2r, _ := peers.FreePort()
		l1 := startFedNode(t, "loop1", "L", "[director]\nenabled = true\nparents = [\"root://127.0.0.1:"+strconv.Itoa(l2r)+"\"]\n")
		startFedNodeAt(t, "loop2", "L", "[director]\nenabled = true\nparents = [\"root://"+l1.rootHost+"\"]\n", l2r)
		start := time.Now()
		out, err := run(t, true, "xrdcp", "-f", l1.rootURL+"//store/none.bin", dir+"/none")
		t.Logf("loop: %v after %v: %s", err, time.Since(start), strings.TrimSpace(out))
		if err == nil || time.Since(start) > 20*time.Second || !strings.Contains(strings.ToLower(out), "loop") && !strings.Contains(strings.ToLower(out), "redirect") {
			t.Errorf("redirect loop: %v after %v: %s", err, time.Since(start), out)
		}
	})

	t.Run("origin B killed", func(t *testing.T) {
		originB.proc.Kill()
		killed := time.Now()
		// Replicated data keeps coming (from A), through C's cache.
		run(t, false, "xrdcp", "-f", dirC.rootURL+"//store/rep.bin", dir+"/rep")
		sameFile(t, dir+"/rep", rep)
		t.Logf("replicated file read %v after the kill", time.Since(killed).Round(time.Millisecond))
		// A file only B had is not "not found": clients wait (down_wait,
		// 3 s here) for B to come back, then get an error naming B as down.
		start := time.Now()
		out, err := run(t, true, "xrdcp", "-f", region.rootURL+"//store/onlyB2.bin", dir+"/gone")
		took := time.Since(start)
		t.Logf("file only at B after the kill: %v after %v: %s", err, took, strings.TrimSpace(out))
		if err == nil || took > 20*time.Second || !strings.Contains(out, "server originB") || !strings.Contains(out, "is down since") ||
			strings.Contains(out, "does not exist") {
			t.Errorf("file only at B after B died: %v after %v: %s (want \"server originB … is down\" within seconds)", err, took, out)
		}
		// Through site C's director and cache: a failure, not absence.
		out, err = run(t, true, "xrdcp", "-f", dirC.rootURL+"//store/onlyB2.bin", dir+"/gone")
		t.Logf("through site C: %v: %s", err, strings.TrimSpace(out))
		if err == nil || strings.Contains(out, "does not exist") {
			t.Errorf("file only at B after B died, through site C: %v: %s (want a failure, not \"does not exist\")", err, out)
		}
		code, body := curlCA(t, bundle, region.httpsURL+"/store/onlyB2.bin")
		if (code != "503" && code != "502") || !strings.Contains(body, "originB") {
			t.Errorf("GET of a file only at B after B died: %s %q, want 503 (wait) or 502 naming originB", code, body)
		}
		// B stays listed, as down, in every view (drop_after is 3 ads of
		// 500 ms: well past it).
		waitFor(t, 10*time.Second, "B down in the federation view", func() bool {
			for _, s := range fedView().Servers {
				if s.Name == "originB" {
					return !s.DownSince.IsZero()
				}
			}
			return false
		})
		time.Sleep(3 * time.Second)
		for _, args := range [][]string{{"federation"}, {"fleet"}} {
			out, _ := run(t, false, siteboxBin, append(args, region.httpsURL, "--ca", region.certFile)...)
			if !regexpDown.MatchString(out) {
				t.Errorf("sitebox %s does not list originB as DOWN:\n%s", args[0], out)
			}
		}
		for _, s := range snapshot(t, region.box).Federation.Servers {
			if s.Name == "originB" && s.State != "down" {
				t.Errorf("dashboard shows originB as %q (%s), want down", s.State, s.Health)
			}
		}
		metrics, _ := run(t, false, "curl", "-sS", "--unix-socket", filepath.Join(region.state, "admin.sock"), "http://sitebox/metrics")
		if !strings.Contains(metrics, `sitebox_director_servers{state="down"} 1`) {
			t.Errorf("metrics lack servers{state=\"down\"} 1:\n%s", grepLines(metrics, "director_servers"))
		}
		// The operator removes it for good.
		run(t, false, siteboxBin, "federation", "remove", "originB", "--state-dir", region.state)
		for _, s := range fedView().Servers {
			if s.Name == "originB" {
				t.Errorf("originB still listed after remove: %+v", s)
			}
		}
	})
}

// grepLines keeps the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
