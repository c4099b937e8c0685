package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/admin"
	"sitebox/internal/cache"
	"sitebox/test/peers"
)

// The operator's commands against a running cache binary, over its admin
// socket: stats after a read, ls, evict, and a re-read that goes upstream
// again because the file was evicted.
func TestCacheOperatorCommands(t *testing.T) {
	peers.Require(t, "xrdcp")
	o := startBox(t, 1)
	const size = 5*mib + 17
	want := writeRandom(t, filepath.Join(o.pools[0], "a.bin"), size)
	r := startRelay(t, o.rootHost)
	c := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{"root://" + r.addr}}}})
	dir := t.TempDir()
	cli := func(args ...string) string {
		t.Helper()
		out, _ := run(t, false, siteboxBin, append(append([]string{"cache"}, args...), "--state-dir", c.state)...)
		return out
	}

	run(t, false, "xrdcp", "-f", c.rootURL+"//store/a.bin", dir+"/a")
	sameFile(t, dir+"/a", want)
	r.reset()

	var ents []cache.EntryInfo
	waitFor(t, 10*time.Second, "the file fully cached", func() bool {
		ents = nil
		json.Unmarshal([]byte(cli("ls", "--json")), &ents)
		return len(ents) == 1 && ents[0].CachedBytes == size
	})
	if ents[0].Path != "/store/a.bin" || ents[0].Size != size || ents[0].Open != 0 {
		t.Errorf("cache ls: %+v", ents[0])
	}
	var st cache.Stats
	if err := json.Unmarshal([]byte(cli("stats", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.UpstreamBytes < size || st.Files != 1 || st.UsedBytes != size || st.MissBytes+st.HitBytes != size {
		t.Errorf("cache stats after one read of %d bytes: %+v", size, st)
	}
	if text := cli("stats"); !strings.Contains(text, "Hit ratio:") || !strings.Contains(text, "1 file") {
		t.Errorf("cache stats (table):\n%s", text)
	}

	var ev admin.EvictResult
	if err := json.Unmarshal([]byte(cli("evict", "/store/a.bin", "--json")), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Bytes != size || len(ev.Files) != 1 {
		t.Errorf("cache evict: %+v", ev)
	}
	if out := cli("ls"); !strings.Contains(out, "nothing cached") {
		t.Errorf("cache ls after evict:\n%s", out)
	}
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/a.bin", dir+"/b")
	sameFile(t, dir+"/b", want)
	if up := r.reset(); up < size {
		t.Errorf("read after evict: %d bytes upstream, want the whole file again", up)
	}
	// Bad input gets a message, not a crash.
	out, err := run(t, true, siteboxBin, "cache", "evict", "../etc", "--state-dir", c.state)
	if err == nil || !strings.Contains(out, "..") && !strings.Contains(strings.ToLower(out), "path") {
		t.Errorf("cache evict ../etc: %v: %s", err, out)
	}
}
