package server

import (
	"bytes"
	"fmt"
	"hash/adler32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// runTool runs a client program with sane timeouts and returns its output.
func runTool(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(peers.Require(t, name), args...)
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=30", "XRD_CONNECTIONRETRY=1", "XRD_LOGLEVEL=Error")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runTool(t, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
		t.Fatalf("%s and %s differ (%v, %v; %d vs %d bytes)", a, b, err1, err2, len(x), len(y))
	}
}

func TestXrdcp(t *testing.T) {
	peers.Require(t, "xrdcp")
	addr, dir := testEnv(t, Config{})
	data := patterned(20<<20 + 4321)
	src := filepath.Join(dir, "src.bin")
	writeTestFile(t, src, data)
	local := t.TempDir()
	url := "root://" + addr + "/"
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"pgread", nil, nil},
		{"plain read", []string{"XRD_CPUSEPGWRTRD=0"}, nil},
		{"four streams", nil, []string{"-S", "4"}},
		{"source checksum", nil, []string{"--cksum", "adler32:source"}},
		{"crc32c end to end", nil, []string{"--cksum", "crc32c"}},
		{"many small chunks in flight", []string{"XRD_CPCHUNKSIZE=65536", "XRD_CPPARALLELCHUNKS=16"}, nil},
		{"unaligned pgread chunks", []string{"XRD_CPCHUNKSIZE=10001", "XRD_CPPARALLELCHUNKS=8"}, nil},
	}
	for _, tt := range tests {
		t.Run("download "+tt.name, func(t *testing.T) {
			dst := filepath.Join(local, "down")
			args := append([]string{"-f", "-s"}, tt.args...)
			mustRun(t, tt.env, "xrdcp", append(args, url+"/src.bin", dst)...)
			sameFile(t, src, dst)
		})
	}
	up := filepath.Join(local, "up.bin")
	writeTestFile(t, up, patterned(9<<20 + 17)[7:])
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		path string
	}{
		{"pgwrite into new dirs", nil, nil, "/new/dir/a.bin"},
		{"plain write", []string{"XRD_CPUSEPGWRTRD=0"}, nil, "/b.bin"},
		{"unaligned pgwrite chunks", []string{"XRD_CPCHUNKSIZE=10001"}, nil, "/c.bin"},
		{"overwrite with checksum", nil, []string{"-f", "--cksum", "adler32:source"}, "/new/dir/a.bin"},
	} {
		t.Run("upload "+tt.name, func(t *testing.T) {
			mustRun(t, tt.env, "xrdcp", append(append([]string{"-s"}, tt.args...), up, url+tt.path)...)
			sameFile(t, up, filepath.Join(dir, tt.path))
		})
	}
	t.Run("upload refuses to overwrite without -f", func(t *testing.T) {
		if out, err := runTool(t, nil, "xrdcp", "-s", up, url+"/b.bin"); err == nil {
			t.Fatalf("overwrote without -f: %s", out)
		}
	})
	t.Run("missing source", func(t *testing.T) {
		out, err := runTool(t, nil, "xrdcp", "-f", url+"/nope", filepath.Join(local, "x"))
		if err == nil || !strings.Contains(out, "3011") {
			t.Fatalf("want a not-found error, got %v: %s", err, out)
		}
	})
}

func TestXrdfs(t *testing.T) {
	peers.Require(t, "xrdfs")
	addr, dir := testEnv(t, Config{})
	data := patterned(123457)
	writeTestFile(t, filepath.Join(dir, "d/f"), data)
	url := "root://" + addr
	out := mustRun(t, nil, "xrdfs", url, "ls", "-l", "/d")
	if !strings.Contains(out, " 123457 ") || !strings.HasSuffix(strings.TrimSpace(out), "/d/f") || !strings.HasPrefix(out, "-rw-r--r--") {
		t.Fatalf("ls -l: %q", out)
	}
	out = mustRun(t, nil, "xrdfs", url, "stat", "/d/f")
	if !strings.Contains(out, "Size:   123457") || !strings.Contains(out, "IsReadable") {
		t.Fatalf("stat: %q", out)
	}
	out = mustRun(t, nil, "xrdfs", url, "query", "checksum", "/d/f")
	if want := fmt.Sprintf("adler32 %08x", adler32.Checksum(data)); !strings.Contains(out, want) {
		t.Fatalf("checksum %q, want %q", out, want)
	}
	mustRun(t, nil, "xrdfs", url, "mkdir", "-p", "/x/y/z")
	mustRun(t, nil, "xrdfs", url, "mv", "/d/f", "/x/y/g")
	sameContent := func(p string) {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("%s after mv: %v", p, err)
		}
	}
	sameContent("x/y/g")
	out = mustRun(t, nil, "xrdfs", url, "ls", "-R", "/x")
	if !strings.Contains(out, "/x/y/g") || !strings.Contains(out, "/x/y/z") {
		t.Fatalf("ls -R: %q", out)
	}
	mustRun(t, nil, "xrdfs", url, "rm", "/x/y/g")
	mustRun(t, nil, "xrdfs", url, "rmdir", "/x/y/z")
	if _, err := os.Stat(filepath.Join(dir, "x/y/z")); !os.IsNotExist(err) {
		t.Fatalf("rmdir left %v", err)
	}
	out, err := runTool(t, nil, "xrdfs", url, "stat", "/x/y/g")
	if err == nil || !strings.Contains(out, "3011") {
		t.Fatalf("stat of removed file: %v %q", err, out)
	}
	out = mustRun(t, nil, "xrdfs", url, "locate", "/x")
	if !strings.Contains(out, "Server ReadWrite") {
		t.Fatalf("locate: %q", out)
	}
	out = mustRun(t, nil, "xrdfs", url, "query", "config", "readv_iov_max")
	if strings.TrimSpace(out) != "1024" {
		t.Fatalf("query config: %q", out)
	}
}

const pyScript = `
import sys, zlib
from XRootD import client
from XRootD.client.flags import DirListFlags, OpenFlags
url, path = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read()
f = client.File()
st, _ = f.open(url + '//d/f.bin', OpenFlags.READ)
assert st.ok, st
chunks = [(0, 100), (4095, 10), (1 << 20, 65536), (len(data) - 5, 5), (333333, 2000000)]
st, vr = f.vector_read(chunks)
assert st.ok, st
for c, (o, l) in zip(vr.chunks, chunks):
    assert c.offset == o and c.length == l and c.buffer == data[o:o + l], (o, l)
st, buf = f.read(len(data) - 10, 1000)
assert st.ok and buf == data[-10:], st
st, buf = f.read(len(data) + 10, 100)
assert st.ok and buf == b'', st
st, s = f.stat()
assert st.ok and s.size == len(data), st
f.close()
fs = client.FileSystem(url)
st, dl = fs.dirlist('/d', DirListFlags.STAT)
assert st.ok, st
got = {e.name: (e.statinfo.size, e.statinfo.flags) for e in dl}
assert got == {'f.bin': (len(data), 48), 'sub': (4096, 51)}, got
st, r = fs.query(client.flags.QueryCode.CHECKSUM, '/d/f.bin')
assert st.ok and r == ('adler32 %08x\x00' % zlib.adler32(data)).encode(), r
f = client.File()
st, _ = f.open(url + '//d/new.bin', OpenFlags.NEW | OpenFlags.MAKEPATH)
assert st.ok, st
st, _ = f.write(data[:70000], 0)
assert st.ok, st
st, _ = f.close()
assert st.ok, st
print("python ok")
`

func TestPythonBindings(t *testing.T) {
	py := peers.RequireFile(t, "../../../.venv/bin/python", "the Python venv with the XRootD bindings")
	addr, dir := testEnv(t, Config{})
	data := patterned(3<<20 + 99)
	writeTestFile(t, filepath.Join(dir, "d/f.bin"), data)
	os.Mkdir(filepath.Join(dir, "d/sub"), 0o755)
	script := filepath.Join(t.TempDir(), "check.py")
	writeTestFile(t, script, []byte(pyScript))
	cmd := exec.Command(py, script, "root://"+addr, filepath.Join(dir, "d/f.bin"))
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=30", "XRD_CONNECTIONRETRY=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "python ok") {
		t.Fatalf("python: %v\n%s", err, out)
	}
	sameData, _ := os.ReadFile(filepath.Join(dir, "d/new.bin"))
	if !bytes.Equal(sameData, data[:70000]) {
		t.Fatal("python write differs")
	}
}
