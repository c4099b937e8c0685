package interop

import (
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sitebox/test/peers"
)

func TestXrdcpDownUp(t *testing.T) {
	peers.Require(t, "xrdcp")
	b := startBox(t, 1)
	data := writeRandom(t, filepath.Join(b.pools[0], "data/file.bin"), 9<<20+123)
	dir := t.TempDir()

	run(t, false, "xrdcp", "-f", b.rootURL+"//store/data/file.bin", dir+"/down")
	sameFile(t, dir+"/down", data)

	out, _ := run(t, false, "xrdcp", "-f", "--cksum", "adler32:source", b.rootURL+"//store/data/file.bin", dir+"/ck")
	sameFile(t, dir+"/ck", data)
	if want := fmt.Sprintf("adler32: %x ", adler32.Checksum(data)); !strings.Contains(out, want) {
		t.Errorf("xrdcp --cksum output %q lacks adler32 %s", out, want)
	}

	run(t, false, "xrdcp", "-f", "-S", "4", b.rootURL+"//store/data/file.bin", dir+"/s4")
	sameFile(t, dir+"/s4", data)

	run(t, false, "xrdcp", "-f", "-p", "--cksum", "adler32:source", dir+"/down", b.rootURL+"//store/up/new/file.bin")
	sameFile(t, filepath.Join(b.pools[0], "up/new/file.bin"), data)

	// Overwrite without -f is refused; with -f it replaces the file.
	small := writeRandom(t, dir+"/small", 1000)
	if _, err := run(t, true, "xrdcp", dir+"/small", b.rootURL+"//store/up/new/file.bin"); err == nil {
		t.Error("xrdcp over an existing file without -f succeeded")
	}
	run(t, false, "xrdcp", "-f", dir+"/small", b.rootURL+"//store/up/new/file.bin")
	sameFile(t, filepath.Join(b.pools[0], "up/new/file.bin"), small)
}

func TestXrdfsNamespace(t *testing.T) {
	peers.Require(t, "xrdfs")
	b := startBox(t, 1)
	data := writeRandom(t, filepath.Join(b.pools[0], "a.bin"), 4321)
	x := func(args ...string) string {
		out, _ := run(t, false, "xrdfs", append([]string{b.rootHost}, args...)...)
		return out
	}
	if out := x("ls", "-l", "/store"); !strings.Contains(out, "4321") || !strings.Contains(out, "/store/a.bin") {
		t.Errorf("ls -l: %q", out)
	}
	if out := x("stat", "/store/a.bin"); !strings.Contains(out, "Size:   4321") || !strings.Contains(out, "IsReadable") {
		t.Errorf("stat: %q", out)
	}
	if out := x("query", "checksum", "/store/a.bin"); !strings.Contains(out, fmt.Sprintf("adler32 %08x", adler32.Checksum(data))) {
		t.Errorf("query checksum: %q", out)
	}
	x("mkdir", "-p", "/store/x/y/z")
	if fi, err := os.Stat(filepath.Join(b.pools[0], "x/y/z")); err != nil || !fi.IsDir() {
		t.Fatalf("mkdir -p did not create x/y/z: %v", err)
	}
	x("mv", "/store/a.bin", "/store/x/y/b.bin")
	sameFile(t, filepath.Join(b.pools[0], "x/y/b.bin"), data)
	if out := x("ls", "/store/x/y"); !strings.Contains(out, "/store/x/y/b.bin") || !strings.Contains(out, "/store/x/y/z") {
		t.Errorf("ls after mv: %q", out)
	}
	x("rm", "/store/x/y/b.bin")
	x("rmdir", "/store/x/y/z")
	if _, err := os.Stat(filepath.Join(b.pools[0], "x/y/z")); !os.IsNotExist(err) {
		t.Errorf("rmdir left the directory: %v", err)
	}
	if out, err := run(t, true, "xrdfs", b.rootHost, "rmdir", "/store/x"); err == nil {
		t.Errorf("rmdir of a non-empty directory succeeded: %q", out)
	}
	if out, err := run(t, true, "xrdfs", b.rootHost, "stat", "/store/missing"); err == nil || !strings.Contains(out, "[3011]") || !strings.Contains(out, "does not exist") {
		t.Errorf("stat of a missing file: %v %q", err, out)
	}
}

func TestParallelXrdcp(t *testing.T) {
	peers.Require(t, "xrdcp")
	b := startBox(t, 1)
	data := writeRandom(t, filepath.Join(b.pools[0], "p.bin"), 16<<20)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := run(t, true, "xrdcp", "-f", b.rootURL+"//store/p.bin", fmt.Sprintf("%s/%d", dir, i)); err != nil {
				errs <- out
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("parallel xrdcp failed: %s", e)
	}
	for i := range 20 {
		sameFile(t, fmt.Sprintf("%s/%d", dir, i), data)
	}
}

func TestPythonBindings(t *testing.T) {
	py := python(t)
	b := startBox(t, 1)
	writeRandom(t, filepath.Join(b.pools[0], "v.bin"), 3<<20)
	writeRandom(t, filepath.Join(b.pools[0], "dir/one"), 111)
	script := `
import sys
from XRootD import client
from XRootD.client.flags import DirListFlags
url, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
f = client.File()
st, _ = f.open(url + "//store/v.bin")
assert st.ok, st.message
chunks = [(0, 10), (4095, 4097), (1 << 20, 65536), (len(data) - 5, 5)]
st, res = f.vector_read(chunks=chunks)
assert st.ok, st.message
for c in res.chunks:
    assert c.buffer == data[c.offset:c.offset + c.length], c.offset
f.close()
fs = client.FileSystem(url)
st, lst = fs.dirlist("/store", DirListFlags.STAT)
assert st.ok, st.message
got = {e.name: (e.statinfo.size, e.statinfo.flags) for e in lst}
assert got["v.bin"][0] == len(data), got
assert got["dir"][1] & 2, got  # IsDir
print("ok", sorted(got))
`
	out, _ := run(t, false, py, "-c", script, b.rootURL, filepath.Join(b.pools[0], "v.bin"))
	if !strings.Contains(out, "ok") {
		t.Fatalf("python: %s", out)
	}
}

func TestBadInputOverRoot(t *testing.T) {
	peers.Require(t, "xrdcp")
	b := startBox(t, 1)
	writeRandom(t, filepath.Join(b.pools[0], "ok.bin"), 100)
	dir := t.TempDir()
	for _, p := range []string{"/store/../etc/passwd", "/store/missing.bin", "/pub/../store/ok.bin"} {
		if out, err := run(t, true, "xrdcp", "-f", b.rootURL+"/"+p, dir+"/x"); err == nil {
			t.Errorf("xrdcp %s succeeded: %s", p, out)
		}
	}
	// Writes to the read-only export are refused and leave nothing behind.
	os.WriteFile(dir+"/up", []byte("x"), 0o644)
	if out, err := run(t, true, "xrdcp", "-f", dir+"/up", b.rootURL+"//pub/new.txt"); err == nil || !strings.Contains(strings.ToLower(out), "read-only") {
		t.Errorf("upload to read-only export: %v %s", err, out)
	}
	// The server is still up for everyone.
	run(t, false, "xrdcp", "-f", b.rootURL+"//store/ok.bin", dir+"/ok")
}
