package interop

import (
	"context"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/test/peers"
)

// cacheRoute is one [[cache.route]] of a cache under test.
type cacheRoute struct {
	prefix    string
	upstreams []string
}

// cacheConf is a sitebox cache started from a config file, so every
// [cache] key can be set. dir is kept across restarts.
type cacheConf struct {
	dir    string
	routes []cacheRoute
	extra  []string // more [cache] lines, e.g. `high_water = "20MiB"`
}

// startCache runs `sitebox serve --config` with only the cache role, on
// fresh loopback ports; the returned box has no pools.
func startCache(t *testing.T, c cacheConf) *box {
	t.Helper()
	state := t.TempDir()
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	var cfg strings.Builder
	cfg.WriteString("[server]\nstate_dir = " + strconv.Quote(state) + "\nlog_level = \"info\"\n")
	cfg.WriteString("[root]\naddr = \"127.0.0.1:" + strconv.Itoa(rp) + "\"\n")
	cfg.WriteString("[https]\naddr = \"127.0.0.1:" + strconv.Itoa(hp) + "\"\n")
	cfg.WriteString("[cache]\ndir = " + strconv.Quote(c.dir) + "\n")
	for _, l := range c.extra {
		cfg.WriteString(l + "\n")
	}
	for _, r := range c.routes {
		q := make([]string, len(r.upstreams))
		for i, u := range r.upstreams {
			q[i] = strconv.Quote(u)
		}
		cfg.WriteString("[[cache.route]]\nprefix = " + strconv.Quote(r.prefix) + "\nupstreams = [" + strings.Join(q, ", ") + "]\n")
	}
	file := filepath.Join(state, "sitebox.toml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return runCache(t, rp, hp, state, "--config", file)
}

// startCacheFlags runs a cache set up with the quick-use flags only:
// `sitebox serve --cache PREFIX=URL[,URL...] --cache-dir DIR --cache-ram RAM`.
func startCacheFlags(t *testing.T, dir, route, ram string) *box {
	t.Helper()
	state := t.TempDir()
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	return runCache(t, rp, hp, state, "--cache", route, "--cache-dir", dir, "--cache-ram", ram,
		"--root-addr", "127.0.0.1:"+strconv.Itoa(rp), "--https-addr", "127.0.0.1:"+strconv.Itoa(hp),
		"--state-dir", state, "--log-level", "info")
}

// runCache starts `sitebox serve ARGS` listening on ports rp (root://) and
// hp (https://), stopped at cleanup with its log shown if the test failed.
func runCache(t *testing.T, rp, hp int, state string, args ...string) *box {
	t.Helper()
	p, err := peers.StartSitebox(context.Background(), siteboxBin, []int{rp, hp}, append([]string{"serve"}, args...)...)
	if err != nil {
		t.Fatalf("%v\nargs: %q", err, args)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("cache log:\n%s", tail(p.Log.String(), 6000))
		}
	})
	return &box{
		rootHost: "127.0.0.1:" + strconv.Itoa(rp),
		rootURL:  "root://127.0.0.1:" + strconv.Itoa(rp),
		httpsURL: "https://127.0.0.1:" + strconv.Itoa(hp),
		certFile: filepath.Join(state, "tls", "cert.pem"),
		state:    state,
		proc:     p,
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// startXrootdOrigin runs a real XRootD data server exporting data (put
// files there first: the tree is handed to user xrootd) and returns its
// host:port.
func startXrootdOrigin(t *testing.T, data string) string {
	t.Helper()
	peers.Require(t, "xrootd")
	port, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: data, Port: port, Name: "interop-cache-" + strconv.Itoa(port), WorkDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)
	return "127.0.0.1:" + strconv.Itoa(port)
}

// allocated is the disk space the files below dir really take (the data
// files are sparse: their size says nothing about what is cached).
func allocated(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// blockMap reads a cache block map (internal/cache/cinfo.go: magic, version,
// block size u32, size, mtime, validated, last access i64, block count u32,
// presence bitmap: a bit per block in versions 1 and 2, per 64 KiB page in
// version 3, per 32 KiB page in version 4) and returns how many blocks are present whole, of how many.
// ok is false while the map does not exist or is not whole.
func blockMap(path string) (present, blocks int, ok bool) {
	m, ok := readMapBits(path)
	for i := 0; ok && i < m.blocks; i++ {
		if m.whole(i) {
			present++
		}
	}
	return present, m.blocks, ok
}

// blockTouched reports whether any page of block i is marked present in
// the map (a scattered reader's miss fetches pages, not the block).
func blockTouched(path string, i int) bool {
	m, ok := readMapBits(path)
	return ok && i < m.blocks && m.any(i)
}

// mapCachedBytes is the data the map says is cached: its present pages
// (or blocks), the file's last one as short as the file makes it.
func mapCachedBytes(path string) int64 {
	m, ok := readMapBits(path)
	if !ok {
		return 0
	}
	var n int64
	for p := range m.nbits {
		if m.bit(p) {
			n += min(m.unit, m.size-int64(p)*m.unit)
		}
	}
	return n
}

// mapBits is a parsed presence bitmap.
type mapBits struct {
	raw      []byte
	blocks   int
	perBlock int   // bits per block
	nbits    int   // bits in all
	unit     int64 // bytes per bit
	size     int64 // the file's
}

func readMapBits(path string) (mapBits, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 52 || string(b[:4]) != "SBXC" {
		return mapBits{}, false
	}
	le := binary.LittleEndian
	version, blockSize, size := le.Uint32(b[4:]), int64(le.Uint32(b[8:])), int64(le.Uint64(b[12:]))
	m := mapBits{raw: b, blocks: int(le.Uint32(b[44:])), perBlock: 1, unit: blockSize, size: size}
	m.nbits = m.blocks
	if version >= 3 {
		m.unit = min(64<<10, blockSize)
		if version >= 4 {
			m.unit = min(32<<10, blockSize)
		}
		m.perBlock, m.nbits = int(blockSize/m.unit), int((size+m.unit-1)/m.unit)
	}
	if len(b) < 48+8*((m.nbits+63)/64) {
		return mapBits{}, false
	}
	return m, true
}

func (m mapBits) bit(i int) bool {
	return binary.LittleEndian.Uint64(m.raw[48+8*(i/64):])&(1<<(i%64)) != 0
}

// whole and any report whether all or some of block i's bits are set.
func (m mapBits) whole(i int) bool { return m.count(i) == min((i+1)*m.perBlock, m.nbits)-i*m.perBlock }
func (m mapBits) any(i int) bool   { return m.count(i) > 0 }

func (m mapBits) count(block int) int {
	n := 0
	for p := block * m.perBlock; p < min((block+1)*m.perBlock, m.nbits); p++ {
		if m.bit(p) {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const mib = 1 << 20

// makeTree writes a ROOT file with a TTree "Events" of nBranches float64
// branches of n entries each, written in chunks of n/chunks entries, so
// the baskets of the branches interleave as in files written by ROOT.
func makeTree(t *testing.T, py, path string, nBranches, n, chunks int) {
	t.Helper()
	script := `
import sys, numpy as np, uproot
path, nb, n, chunks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(11)
names = ["b%d" % i for i in range(nb)]
step = n // chunks
with uproot.recreate(path) as f:
    tree = f.mktree("Events", {k: np.float64 for k in names})  # a TTree (assigning a dict makes an RNTuple)
    for c in range(chunks):
        tree.extend({k: rng.normal(i, 1.0, step) for i, k in enumerate(names)})
print("ok")
`
	os.MkdirAll(filepath.Dir(path), 0o755)
	if out, _ := run(t, false, py, "-c", script, path, strconv.Itoa(nBranches), strconv.Itoa(n), strconv.Itoa(chunks)); !strings.Contains(out, "ok") {
		t.Fatalf("making %s: %s", path, out)
	}
}
