package interop

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"sitebox/test/peers"
)

// sendinfoProbe sends kXR_set ("monitor info …") with the Python
// bindings, as their FileSystem.sendinfo does.
const sendinfoProbe = `
import sys
from XRootD import client
st, resp = client.FileSystem("root://" + sys.argv[1]).sendinfo("sitebox interop")
print("ok" if st.ok else "failed: " + st.message)
`

// xattrProbe uses the Python bindings' attribute calls on a path and on
// open files (read and update handles) and prints what they answered.
const xattrProbe = `
import json, sys
from XRootD import client
from XRootD.client.flags import OpenFlags
url, path = sys.argv[1], sys.argv[2]
def res(s):
    return [s["ok"], s["errno"]] if isinstance(s, dict) else [s.ok, s.errno]
def sts(r):
    return [[x[0]] + ([x[1]] if len(x) == 3 else []) + res(x[-1]) for x in (r or [])]
fs = client.FileSystem(url)
out = {}
st, r = fs.set_xattr(path, [("p", "1"), ("q", "22")]); out["fs set"] = [st.ok, sts(r)]
st, r = fs.get_xattr(path, ["p", "nope"]); out["fs get"] = [st.ok, sts(r)]
st, r = fs.list_xattr(path); out["fs list"] = [st.ok, sorted(sts(r))]
st, r = fs.del_xattr(path, ["q", "nope"]); out["fs del"] = [st.ok, sts(r)]
f = client.File()
f.open(url + "/" + path, OpenFlags.READ)
st, r = f.list_xattr(); out["read handle list"] = [st.ok, sorted(sts(r))]
st, r = f.set_xattr([("r", "3")]); out["read handle set"] = [st.ok, st.errno]
f.close()
f = client.File()
f.open(url + "/" + path, OpenFlags.UPDATE)
st, r = f.set_xattr([("r", "3")]); out["update handle set"] = [st.ok, sts(r)]
st, r = f.get_xattr(["r"]); out["update handle get"] = [st.ok, sts(r)]
f.close()
print(json.dumps(out, sort_keys=True))
`

// TestXrootdXattr runs the same attribute requests against xrootd 5.5
// and sitebox: xrdfs xattr set, get, list and del, a missing attribute,
// xrdcp --xattr both ways, query xattr and query config fattr, and
// kXR_set from the Python bindings. The attributes land on the files as
// xrootd keeps them ("user.U.<name>").
func TestXrootdXattr(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "xrootd"} {
		peers.Require(t, tool)
	}
	py := python(t)
	xdata := t.TempDir()
	xhost := startXrootdOrigin(t, xdata)
	b := startBox(t, 1)
	local := filepath.Join(t.TempDir(), "src")
	writeRandom(t, local, 10_000)
	if err := unix.Setxattr(local, "user.tag", []byte("from-local"), 0); err != nil {
		t.Fatalf("local xattr: %v", err)
	}
	answers := map[string]map[string]string{}
	for _, s := range []struct{ name, host, prefix, data string }{
		{"xrootd", xhost, "", xdata},
		{"sitebox", b.rootHost, "/store", b.pools[0]},
	} {
		t.Run(s.name, func(t *testing.T) {
			got := map[string]string{}
			answers[s.name] = got
			url := "root://" + s.host + "/" + s.prefix
			onDisk := func(p string) string { return filepath.Join(s.data, filepath.FromSlash(p)) }
			f := s.prefix + "/xa/f"
			run(t, false, "xrdcp", local, url+"/xa/f")
			run(t, false, "xrdfs", s.host, "xattr", f, "set", "color=blue")
			if v := diskAttr(t, onDisk("xa/f"), "user.U.color"); v != "blue" {
				t.Errorf("on disk user.U.color = %q, want blue", v)
			}
			// xrdfs prints the path first: compare without the export prefix.
			out, _ := run(t, false, "xrdfs", s.host, "xattr", f, "get", "color")
			got["get"] = strings.Replace(strings.TrimSpace(out), s.prefix+"/", "/", 1)
			out, _ = run(t, false, "xrdfs", s.host, "xattr", f, "list")
			got["list"] = strings.Replace(strings.TrimSpace(out), s.prefix+"/", "/", 1)
			out, err := run(t, true, "xrdfs", s.host, "xattr", f, "get", "missing")
			got["get missing"] = errCode(out, err)
			run(t, false, "xrdfs", s.host, "xattr", f, "del", "color")
			out, err = run(t, true, "xrdfs", s.host, "xattr", f, "get", "color")
			got["get deleted"] = errCode(out, err)
			out, err = run(t, true, "xrdfs", s.host, "xattr", s.prefix+"/xa/nofile", "list")
			got["list missing file"] = errCode(out, err)

			// xrdcp --xattr: local → server → local.
			run(t, false, "xrdcp", "--xattr", local, url+"/xa/g")
			if v := diskAttr(t, onDisk("xa/g"), "user.U.tag"); v != "from-local" {
				t.Errorf("xrdcp --xattr upload: user.U.tag = %q, want from-local", v)
			}
			back := filepath.Join(t.TempDir(), "back")
			run(t, false, "xrdcp", "--xattr", url+"/xa/g", back)
			if v := diskAttr(t, back, "user.tag"); v != "from-local" {
				t.Errorf("xrdcp --xattr download: user.tag = %q, want from-local", v)
			}

			out, _ = run(t, false, "xrdfs", s.host, "query", "xattr", f)
			got["query xattr"] = regexp.MustCompile(`oss\.(mt|ct|at)=\d+`).ReplaceAllString(strings.TrimSpace(out), "oss.$1=T")
			out, _ = run(t, false, "xrdfs", s.host, "query", "config", "fattr")
			got["query config fattr"] = strings.TrimSpace(out)
			out, _ = run(t, true, py, "-c", sendinfoProbe, s.host)
			got["kXR_set"] = strings.TrimSpace(out)
			out, _ = run(t, false, py, "-c", xattrProbe, "root://"+s.host, s.prefix+"/xa/g")
			got["python bindings"] = strings.TrimSpace(out[strings.LastIndex(out, "{"):])
		})
	}
	for k, want := range answers["xrootd"] {
		t.Logf("%s: xrootd %q, sitebox %q", k, want, answers["sitebox"][k])
		if got := answers["sitebox"][k]; got != want {
			t.Errorf("%s: sitebox answers %q, xrootd %q", k, got, want)
		}
	}
}

// diskAttr reads an extended attribute of a file ("" if it has none).
func diskAttr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 1024)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// errCode is the "[code]" of a failed xrdfs, or "ok".
func errCode(out string, err error) string {
	if err == nil {
		return "ok"
	}
	if m := regexp.MustCompile(`\[(\d+)\]`).FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return "failed: " + strings.TrimSpace(out)
}
