package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/test/peers"
)

// Upstream traffic is counted by a relay in front of the origin (the bytes
// the origin sends). A read served from the cache may still cost an open
// or stat upstream, never data: this is the allowance for that.
const noDataUpstream = 64 << 10

// TestCacheClients: xrdcp, sitebox get and uproot, over root:// and
// https://, read through the cache from a real XRootD origin and from a
// sitebox origin (over root:// and over https://) and get the source's
// bytes; the first read costs the file once upstream, the next ones
// nothing.
func TestCacheClients(t *testing.T) {
	peers.Require(t, "xrdcp")
	py := python(t)
	fixtures := t.TempDir()
	tree := filepath.Join(fixtures, "tree.root")
	makeTree(t, py, tree, 3, 100000, 1)
	treeData, _ := os.ReadFile(tree)

	cases := []struct {
		name   string
		origin func(t *testing.T, data string) (addr string, conf []string)
		scheme string
	}{
		{"xrootd", func(t *testing.T, data string) (string, []string) {
			return startXrootdOrigin(t, data), nil
		}, "root"},
		{"sitebox-root", func(t *testing.T, data string) (string, []string) {
			return startSiteboxOrigin(t, data).rootHost, nil
		}, "root"},
		{"sitebox-https", func(t *testing.T, data string) (string, []string) {
			o := startSiteboxOrigin(t, data)
			return strings.TrimPrefix(o.httpsURL, "https://"), []string{"upstream_ca = " + quote(o.certFile)}
		}, "https"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			want := writeRandom(t, filepath.Join(data, "store/run1/data.bin"), 24*mib+12345)
			os.WriteFile(filepath.Join(data, "store/tree.root"), treeData, 0o644)
			addr, conf := tc.origin(t, data)
			r := startRelay(t, addr)
			c := startCache(t, cacheConf{dir: t.TempDir(), extra: conf,
				routes: []cacheRoute{{"/store", []string{tc.scheme + "://" + r.addr}}}})
			dir := t.TempDir()

			run(t, false, "xrdcp", "-f", c.rootURL+"//store/run1/data.bin", dir+"/first")
			sameFile(t, dir+"/first", want)
			up := r.reset()
			t.Logf("first read: %d bytes upstream for %d", up, len(want))
			if up < int64(len(want)) || up > int64(len(want))*101/100+noDataUpstream {
				t.Errorf("first read took %d bytes upstream for a file of %d", up, len(want))
			}

			run(t, false, "xrdcp", "-f", c.rootURL+"//store/run1/data.bin", dir+"/second")
			sameFile(t, dir+"/second", want)
			run(t, false, siteboxBin, "get", c.rootURL+"//store/run1/data.bin", dir+"/get-root")
			sameFile(t, dir+"/get-root", want)
			run(t, false, siteboxBin, "get", "--ca", c.certFile, c.httpsURL+"/store/run1/data.bin", dir+"/get-https")
			sameFile(t, dir+"/get-https", want)
			up = r.reset()
			t.Logf("xrdcp, sitebox get over root:// and https:// again: %d bytes upstream", up)
			if up > noDataUpstream {
				t.Errorf("cached reads took %d bytes upstream, want none but an open's", up)
			}

			uprootSame(t, py, tree, c.rootURL+"//store/tree.root", c.httpsURL+"/store/tree.root", c.certFile)
			up = r.reset()
			t.Logf("uproot: %d bytes upstream for a file of %d", up, len(treeData))
			if up > int64(len(treeData))+noDataUpstream {
				t.Errorf("uproot over both protocols took %d bytes upstream for a file of %d", up, len(treeData))
			}
			uprootSame(t, py, tree, c.rootURL+"//store/tree.root", c.httpsURL+"/store/tree.root", c.certFile)
			up = r.reset()
			t.Logf("uproot again: %d bytes upstream", up)
			if up > noDataUpstream {
				t.Errorf("uproot's second reads took %d bytes upstream", up)
			}
		})
	}
}

// uprootSame reads every branch of the tree over both URLs and compares
// with the local file.
func uprootSame(t *testing.T, py, local, rootURL, httpsURL, cert string) {
	t.Helper()
	script := `
import os, sys, numpy as np, uproot
local, root_url, https_url, cert = sys.argv[1:5]
os.environ["SSL_CERT_FILE"] = cert
want = uproot.open(local)["Events"].arrays(library="np")
for url in (root_url, https_url):
    with uproot.open(url + ":Events") as tree:
        got = tree.arrays(library="np")
    assert sorted(got) == sorted(want), (url, sorted(got))
    for k in want:
        assert np.array_equal(got[k], want[k]), (url, k)
    print("same", url.split(":")[0], len(want))
`
	out, _ := run(t, false, py, "-c", script, local, rootURL, httpsURL, cert)
	if strings.Count(out, "same") != 2 {
		t.Fatalf("uproot through the cache: %s", out)
	}
}

// startSiteboxOrigin serves data/store as /store from a sitebox origin.
func startSiteboxOrigin(t *testing.T, data string) *box {
	t.Helper()
	o := startBox(t, 1)
	entries, _ := os.ReadDir(filepath.Join(data, "store"))
	for _, e := range entries {
		if err := os.Rename(filepath.Join(data, "store", e.Name()), filepath.Join(o.pools[0], e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestCacheCoalescing: ten xrdcp at once on the same uncached 200 MB file
// cost the file once upstream (counted at a real XRootD origin), not ten
// times, and every client gets the source's bytes. The cache is set up
// with the quick-use flags.
func TestCacheCoalescing(t *testing.T) {
	peers.Require(t, "xrdcp")
	data := t.TempDir()
	want := writeRandom(t, filepath.Join(data, "store/big.bin"), 200*mib)
	r := startRelay(t, startXrootdOrigin(t, data))
	c := startCacheFlags(t, t.TempDir(), "/store=root://"+r.addr, "1GiB")
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]string, 10)
	start := time.Now()
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := run(t, true, "xrdcp", "-f", c.rootURL+"//store/big.bin", fmt.Sprintf("%s/%d", dir, i)); err != nil {
				errs[i] = fmt.Sprintf("after %v: %v: %s", time.Since(start), err, out)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	up := r.reset()
	t.Logf("10 clients × %d bytes in %v: %d bytes upstream (%+d)", len(want), took, up, up-int64(len(want)))
	for i := range 10 {
		if errs[i] != "" {
			t.Errorf("client %d: %s", i, errs[i])
			continue
		}
		sameFile(t, fmt.Sprintf("%s/%d", dir, i), want)
	}
	// One block of slack, and the protocol's headers (well under 1%).
	if lo, hi := int64(len(want))-mib, int64(len(want))+mib+int64(len(want))/200; up < lo || up > hi {
		t.Errorf("upstream carried %d bytes for a file of %d read by 10 clients, want %d..%d", up, len(want), lo, hi)
	}
}

// TestCacheUprootOneBranch: uproot reading one branch of a five-branch
// TTree fetches and caches that branch's baskets, not the file. ROOT
// files written in clusters interleave the branches' baskets, so the
// branch is a few scattered ranges; uproot asks for them with readv.
func TestCacheUprootOneBranch(t *testing.T) {
	py := python(t)
	data := t.TempDir()
	tree := filepath.Join(data, "store/five.root")
	makeTree(t, py, tree, 5, 1_000_000, 4) // 5 branches × 8 MB, 4 clusters of 2 MB baskets
	fi, _ := os.Stat(tree)
	r := startRelay(t, startXrootdOrigin(t, data))
	cacheDir := t.TempDir()
	c := startCache(t, cacheConf{dir: cacheDir, routes: []cacheRoute{{"/store", []string{"root://" + r.addr}}}})
	// The blocks uproot has to read: the header and TTree (at the start)
	// and the branch's baskets.
	script := `
import sys, numpy as np, uproot
local, url, bs = sys.argv[1], sys.argv[2], int(sys.argv[3])
f = uproot.open(local)
branch = f["Events"]["b2"]
want = branch.array(library="np")
key = f.key("Events")
ranges = [(0, key.data_cursor.index + key.data_compressed_bytes)]
ranges += [(int(branch.member("fBasketSeek")[i]), branch.basket_compressed_bytes(i) + 200) for i in range(branch.num_baskets)]
need = sorted({b for off, n in ranges for b in range(off // bs, (off + n - 1) // bs + 1)})
with uproot.open(url + ":Events") as tree:
    got = tree["b2"].array(library="np")
assert np.array_equal(got, want)
print("same", len(got))
print("need", " ".join(map(str, need)))
`
	out, _ := run(t, false, py, "-c", script, tree, c.rootURL+"//store/five.root", strconv.Itoa(mib))
	if !strings.Contains(out, "same") {
		t.Fatalf("uproot: %s", out)
	}
	need := map[int]bool{}
	_, list, _ := strings.Cut(out, "need ")
	for _, f := range strings.Fields(list) {
		b, _ := strconv.Atoi(f)
		need[b] = true
	}
	// Let read-ahead still in flight land, and the block map be saved.
	meta := filepath.Join(cacheDir, "meta/store/five.root")
	var onDisk int64
	waitFor(t, 10*time.Second, "cache writes settle", func() bool {
		n := allocated(t, filepath.Join(cacheDir, "data"))
		settled := n == onDisk && mapCachedBytes(meta) >= n-mib
		onDisk = n
		time.Sleep(250 * time.Millisecond)
		return settled
	})
	up := r.reset()
	present, blocks, _ := blockMap(meta)
	var which []byte
	var extra []int
	for i := range blocks {
		has := blockTouched(meta, i)
		which = append(which, ".#"[btoi(has)])
		if has && !need[i] {
			extra = append(extra, i)
		}
	}
	t.Logf("file %d bytes: %d bytes upstream, %d on disk; blocks present %d of %d (%d needed): %s", fi.Size(), up, onDisk, present, blocks, len(need), which)
	if onDisk >= fi.Size()/2 || up >= fi.Size()/2 {
		t.Errorf("reading one branch of five cached %d bytes and fetched %d of a %d-byte file; want under half", onDisk, up, fi.Size())
	}
	// uproot never reads sequentially here: read-ahead has no business
	// fetching blocks no read touches.
	if len(extra) > 0 {
		t.Errorf("blocks %v were fetched though no read touched them", extra)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
