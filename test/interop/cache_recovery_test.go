package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestCacheKilledDuringFill: the cache is killed (SIGKILL) while a slow
// upstream fills a big file. Restarted on the same directory it serves the
// file byte-identical, fetching only what it had not kept.
func TestCacheKilledDuringFill(t *testing.T) {
	peers.Require(t, "xrdcp")
	data := t.TempDir()
	const size = 64*mib + 4321
	want := writeRandom(t, filepath.Join(data, "store/fill.bin"), size)
	r := startRelay(t, startXrootdOrigin(t, data))
	r.rate.Store(16 << 20) // 4 s for the whole file
	conf := cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{"root://" + r.addr}}}}
	c := startCache(t, conf)
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp := exec.CommandContext(ctx, "xrdcp", "-f", c.rootURL+"//store/fill.bin", dir+"/killed")
	cp.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=10", "XRD_CONNECTIONRETRY=1", "XRD_STREAMTIMEOUT=10")
	if err := cp.Start(); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(conf.dir, "meta/store/fill.bin")
	waitFor(t, 20*time.Second, "a block map with 8 blocks saved during the fill", func() bool {
		p, _, ok := blockMap(meta)
		return ok && p >= 8
	})
	c.proc.Kill()
	saved, blocks, _ := blockMap(meta)
	// The saved blocks need not be the first ones, nor all 1 MiB: read-ahead
	// may have fetched the file's short last block before the kill.
	savedBytes := mapCachedBytes(meta)
	cp.Wait() // xrdcp fails: its server is gone
	waitFor(t, 10*time.Second, "the origin's connections to the killed cache closed", r.idle)
	killedAt := r.reset()
	if killedAt >= size {
		t.Fatalf("the fill finished (%d bytes upstream) before the kill", killedAt)
	}
	t.Logf("killed after %d of %d bytes upstream; the saved map has %d of %d blocks", killedAt, size, saved, blocks)

	r.rate.Store(0)
	c = startCache(t, conf)
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/fill.bin", dir+"/after")
	sameFile(t, dir+"/after", want)
	up := r.reset()
	missing := int64(size) - savedBytes
	t.Logf("after restart: %d bytes upstream; %d were not in the saved map", up, missing)
	if up < missing || up > missing+noDataUpstream {
		t.Errorf("restarted cache fetched %d bytes; %d were missing", up, missing)
	}
	run(t, false, siteboxBin, "get", "--ca", c.certFile, c.httpsURL+"/store/fill.bin", dir+"/https")
	sameFile(t, dir+"/https", want)
	if up := r.reset(); up > noDataUpstream {
		t.Errorf("a read after the refill took %d bytes upstream", up)
	}
}

// TestCacheCorruptBlock: a byte flipped in a cached block on disk is
// caught by its page's CRC32C on the next read, which refetches that one
// 32 KiB page and serves the right bytes; the same holds after a restart,
// when the CRC comes from the saved block map.
func TestCacheCorruptBlock(t *testing.T) {
	peers.Require(t, "xrdcp")
	o := startBox(t, 1)
	const size = 8*mib + 100
	want := writeRandom(t, filepath.Join(o.pools[0], "c.bin"), size)
	r := startRelay(t, o.rootHost)
	conf := cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{"root://" + r.addr}}}}
	c := startCache(t, conf)
	dir := t.TempDir()
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/c.bin", dir+"/fill")
	sameFile(t, dir+"/fill", want)
	meta := filepath.Join(conf.dir, "meta/store/c.bin")
	cached := filepath.Join(conf.dir, "data/store/c.bin")
	waitFor(t, 10*time.Second, "all 9 blocks in the saved map", func() bool {
		p, _, ok := blockMap(meta)
		return ok && p == 9
	})
	r.reset()

	flip := func(off int64) {
		t.Helper()
		f, err := os.OpenFile(cached, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte{want[off] ^ 0x5a}, off); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name string) {
		t.Helper()
		run(t, false, "xrdcp", "-f", c.rootURL+"//store/c.bin", dir+"/"+name)
		sameFile(t, dir+"/"+name, want)
		up := r.reset()
		t.Logf("%s: %d bytes upstream", name, up)
		// Only the 32 KiB page holding the bad byte is refetched.
		if page := int64(32 << 10); up < page || up > page+noDataUpstream {
			t.Errorf("%s: %d bytes upstream, want one page (%d) refetched", name, up, page)
		}
		// The refetched page is written back over the bad one. (The data
		// file is padded to 4 KiB for O_DIRECT.)
		waitFor(t, 10*time.Second, "the bad page rewritten on disk", func() bool {
			got, _ := os.ReadFile(cached)
			return len(got) >= size && len(got) < size+4096 && string(got[:size]) == string(want)
		})
	}

	flip(3*mib + 777)
	check("while running")

	c.proc.Stop()
	flip(7*mib + 12345)
	c = startCache(t, conf)
	check("after restart")
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/c.bin", dir+"/clean")
	sameFile(t, dir+"/clean", want)
	if up := r.reset(); up > noDataUpstream {
		t.Errorf("read after repair: %d bytes upstream", up)
	}
}
