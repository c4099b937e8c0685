package interop

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestCacheWatermarkPurge: once the cache holds more than its high mark,
// the purge evicts least recently used files until usage is under the low
// mark, and keeps a file a client (the XRootD Python bindings) has open
// although it is the least recently used.
func TestCacheWatermarkPurge(t *testing.T) {
	peers.Require(t, "xrdcp")
	py := python(t)
	o := startBox(t, 1)
	files := []string{"a", "b", "c", "d", "e", "f"}
	want := map[string][]byte{}
	for _, f := range files {
		want[f] = writeRandom(t, filepath.Join(o.pools[0], f+".bin"), 4*mib)
	}
	r := startRelay(t, o.rootHost)
	conf := cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{"root://" + r.addr}}},
		extra: []string{`high_water = "20MiB"`, `low_water = "10MiB"`, `purge_interval = "500ms"`}}
	c := startCache(t, conf)
	data := filepath.Join(conf.dir, "data/store")

	// a.bin is read first (the least recently used) and stays open.
	keeper := exec.Command(py, "-c", `
import sys
from XRootD import client
f = client.File()
st, _ = f.open(sys.argv[1])
assert st.ok, st.message
st, buf = f.read(0, 4 << 20)
assert st.ok and len(buf) == 4 << 20, st.message
print("open", flush=True)
sys.stdin.read()
f.close()
`, c.rootURL+"//store/a.bin")
	stdin, _ := keeper.StdinPipe()
	stdout, _ := keeper.StdoutPipe()
	var stderr strings.Builder
	keeper.Stderr = &stderr
	if err := keeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { keeper.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			keeper.Process.Kill()
			<-done
		}
	})
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); !strings.HasPrefix(line, "open") {
		t.Fatalf("python did not open a.bin: %q %s", line, stderr.String())
	}

	dir := t.TempDir()
	for _, f := range files[1:] {
		run(t, false, "xrdcp", "-f", c.rootURL+"//store/"+f+".bin", dir+"/"+f)
		sameFile(t, dir+"/"+f, want[f])
		time.Sleep(20 * time.Millisecond) // distinct access times
	}
	// 24 MiB were cached, over the 20 MiB mark: the purge must bring the
	// cache under 10 MiB without touching a.bin.
	var used int64
	waitFor(t, 15*time.Second, "usage under the low mark", func() bool {
		used = allocated(t, data)
		return used < 10*mib
	})
	left := map[string]int64{}
	for _, f := range files {
		if n := allocated(t, filepath.Join(data, f+".bin")); n > 0 {
			left[f] = n
		}
	}
	t.Logf("after the purge: %d bytes cached: %v", used, left)
	if left["a"] != 4*mib {
		t.Errorf("the open file a.bin keeps %d bytes cached, want all %d", left["a"], 4*mib)
	}
	waitFor(t, 5*time.Second, "the open file's block map saved with its 4 blocks", func() bool {
		p, _, _ := blockMap(filepath.Join(conf.dir, "meta/store/a.bin"))
		return p == 4
	})
	if left["f"] != 4*mib {
		t.Errorf("the most recently used f.bin was purged (%d bytes left) before older files", left["f"])
	}

	// The open file is still served from disk; purged ones come back.
	r.reset()
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/a.bin", dir+"/a")
	sameFile(t, dir+"/a", want["a"])
	if up := r.reset(); up > noDataUpstream {
		t.Errorf("a.bin, kept through the purge, took %d bytes upstream", up)
	}
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/b.bin", dir+"/b2")
	sameFile(t, dir+"/b2", want["b"])
	if up := r.reset(); up < 4*mib {
		t.Errorf("b.bin was purged but took only %d bytes upstream", up)
	}
	fmt.Fprintln(stdin)
}
