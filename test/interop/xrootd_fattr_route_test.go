package interop

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestXrootdXattrRoutes sends attribute requests through a director,
// which redirects them to the origin holding the file, and through a
// cache, which answers reads with the origin's attributes and refuses
// changes as read-only (3025), as it refuses every change.
func TestXrootdXattrRoutes(t *testing.T) {
	for _, tool := range []string{"xrdfs", "xrdcp"} {
		peers.Require(t, tool)
	}
	t.Run("director", func(t *testing.T) {
		dir := startFedNode(t, "dir", "A", "[director]\nenabled = true\nlocate_timeout = \"2s\"\n")
		pool := t.TempDir()
		startFedNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n"+advertiseTo(dir, "500ms"))
		writeRandom(t, filepath.Join(pool, "f"), 100)
		waitFor(t, 15*time.Second, "the origin in the director's registry", func() bool {
			_, err := run(t, true, "xrdfs", dir.rootHost, "stat", "/store/f")
			return err == nil
		})
		run(t, false, "xrdfs", dir.rootHost, "xattr", "/store/f", "set", "site=A")
		if v := diskAttr(t, filepath.Join(pool, "f"), "user.U.site"); v != "A" {
			t.Errorf("set through the director: origin's user.U.site = %q, want A", v)
		}
		if out, _ := run(t, false, "xrdfs", dir.rootHost, "xattr", "/store/f", "get", "site"); !strings.Contains(out, `site="A"`) {
			t.Errorf("get through the director: %q", out)
		}
		if out, _ := run(t, false, "xrdfs", dir.rootHost, "xattr", "/store/f", "list"); !strings.Contains(out, `site="A"`) {
			t.Errorf("list through the director: %q", out)
		}
		run(t, false, "xrdfs", dir.rootHost, "xattr", "/store/f", "del", "site")
		if v := diskAttr(t, filepath.Join(pool, "f"), "user.U.site"); v != "" {
			t.Errorf("del through the director left user.U.site = %q", v)
		}
	})

	t.Run("cache", func(t *testing.T) {
		origin := startBox(t, 1)
		writeRandom(t, filepath.Join(origin.pools[0], "f"), 100_000)
		run(t, false, "xrdfs", origin.rootHost, "xattr", "/store/f", "set", "owner=ops")
		c := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{"root://" + origin.rootHost}}}})
		if out, _ := run(t, false, "xrdfs", c.rootHost, "xattr", "/store/f", "get", "owner"); !strings.Contains(out, `owner="ops"`) {
			t.Errorf("get through the cache: %q", out)
		}
		if out, _ := run(t, false, "xrdfs", c.rootHost, "xattr", "/store/f", "list"); !strings.Contains(out, `owner="ops"`) {
			t.Errorf("list through the cache: %q", out)
		}
		if out, err := run(t, true, "xrdfs", c.rootHost, "xattr", "/store/f", "set", "owner=me"); err == nil || !strings.Contains(out, "[3025]") {
			t.Errorf("set through the cache: %v %q; want refused as read-only (3025)", err, out)
		}
		local := filepath.Join(t.TempDir(), "f")
		run(t, false, "xrdcp", "--xattr", c.rootURL+"//store/f", local)
		if v := diskAttr(t, local, "user.owner"); v != "ops" {
			t.Errorf("xrdcp --xattr from the cache: user.owner = %q, want ops", v)
		}
	})
}
