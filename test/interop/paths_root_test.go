package interop

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// rootPathAnswers is what xrootd 5.5 and sitebox answer (0: ok) to each
// request of testdata/paths_root.py: a path ending in "/" or "/." names
// a directory or nothing, on every request; names and paths too long are
// 3002; a repeated mkdir of a directory with the same mode, and a rename
// onto itself, succeed.
var rootPathAnswers = map[string]int{
	"open read f/": 3005, "open read f/.": 3005, "open read d/": 3016, "open read nx/": 3011,
	"open update f/": 3005, "open delete f/": 3005, "open delete f/.": 3005, "open delete d/": 3016,
	"open delete nx/": 3016, "open new nx/": 3016,
	"stat f/": 3005, "stat f/.": 3005, "stat d/": 0, "stat d/.": 0, "stat nx/": 3011,
	"rm f/": 3005, "rm f/.": 3005, "rm d/": 0, "rm d/.": 3000, "rm nx/": 3011,
	"rmdir d/.": 3000, "rmdir d/": 0, "rmdir f/": 3005,
	"mv f/ g": 3005, "mv f/. g": 3005, "mv f g/": 3005, "mv f d/": 3005,
	"mv d/ d2": 0, "mv d d2/": 0, "mv d/. d2": 3000, "mv f f": 0, "mv d d": 0,
	"mkdir f/": 3018, "mkdir nx/": 0, "mkdir nx/.": 3011, "mkdir d again": 0, "mkdir d/ again": 0,
	"mkdir d other mode": 3018, "mkdir -p d other mode": 0,
	"truncate f/": 3005, "truncate d/": 3016, "chmod f/": 3005, "chmod d/": 0,
	"checksum f/": 3005, "locate f/": 3005, "locate d/": 0,
	"dirlist f/": 3005, "dirlist d/": 0, "dirlist d/.": 0,
	"xattr set f/": 3005, "xattr get f/": 3005, "xattr list f/": 3005, "statvfs f/": 0,
	"stat 256-byte name": 3002, "open new 256-byte name": 3002, "mkdir 256-byte name": 3002,
	"mv to 256-byte name": 3002, "stat 4097-byte path": 3002,
}

// rootPathDifferences are the requests where sitebox keeps apart from
// xrootd 5.5 on purpose (docs/root-protocol.md).
var rootPathDifferences = map[string]string{
	"open delete nx/":       "xrootd refuses, but leaves a directory nx behind",
	"open new nx/":          "xrootd refuses, but leaves a directory nx behind",
	"mv f g/":               "xrootd refuses, but leaves a directory g behind",
	"mv d/. d2":             "xrootd asks the client to wait until it gives up; sitebox answers 3000",
	"mkdir -p d other mode": "xrootd answers 3018; sitebox's mkdir -p accepts any existing directory",
}

// TestXrootdTrailingSlash sends the requests of testdata/paths_root.py to
// xrootd 5.5 and to a box side by side, and copies with xrdcp to names
// ending in "/": no request acts on a file through a name written as a
// directory, and the answers are xrootd's.
func TestXrootdTrailingSlash(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "xrootd"} {
		peers.Require(t, tool)
	}
	py := python(t)
	xdata := t.TempDir()
	port, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: xdata, Port: port, Name: "interop-paths-" + strconv.Itoa(port), WorkDir: t.TempDir(),
		Extra: []string{"xrootd.chksum adler32"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)
	b := startBox(t, 2)
	xhost := "127.0.0.1:" + strconv.Itoa(port)

	names := slices.Sorted(maps.Keys(rootPathAnswers))
	// xrootd stalls a rename of "d/." until the client gives up.
	forXrootd := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "mv d/. d2" })
	xr := pathProbe(t, py, append([]string{xhost, ""}, forXrootd...)...)
	sb := pathProbe(t, py, b.rootHost, "/store")
	for _, name := range names {
		want := rootPathAnswers[name]
		s, ok := sb[name]
		if !ok {
			t.Errorf("%s: no answer from sitebox", name)
			continue
		}
		x, asked := xr[name]
		known := rootPathDifferences[name]
		t.Logf("%-24s xrootd %v | sitebox %v", name, x, s)
		if code := int(s[0].(float64)); code != want {
			t.Errorf("%s: sitebox answers %d, want %d", name, code, want)
		}
		if asked && int(x[0].(float64)) != want && known == "" {
			t.Errorf("%s: xrootd answers %v, the test expects %d", name, x[0], want)
		}
		if asked && x[1] != s[1] && known == "" {
			t.Errorf("%s: afterwards xrootd holds %q, sitebox %q", name, x[1], s[1])
		}
		if want != 0 && s[1] != "f:5 d/" {
			t.Errorf("%s was refused but changed the namespace: %q", name, s[1])
		}
	}
	t.Run("xrdcp", func(t *testing.T) {
		for _, s := range []struct{ name, host, prefix, data string }{
			{"xrootd", xhost, "", xdata},
			{"sitebox", b.rootHost, "/store", b.pools[0]},
		} {
			t.Run(s.name, func(t *testing.T) { copyToSlashNames(t, s.host, s.prefix, s.data) })
		}
	})
}

func pathProbe(t *testing.T, py string, args ...string) map[string][2]any {
	t.Helper()
	out, _ := run(t, false, py, append([]string{"testdata/paths_root.py"}, args...)...)
	var m map[string][2]any
	if err := json.Unmarshal([]byte(out[strings.LastIndex(out, "\n{")+1:]), &m); err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	return m
}

// copyToSlashNames: xrdcp to "dir/" puts the file into dir (XrdCl stats
// "dir/" and appends the file's name); to "f/" for a file f, or "nx/"
// for nothing, it fails and leaves the namespace alone; a second xrdfs
// mkdir of a directory succeeds, as a resent one must.
func copyToSlashNames(t *testing.T, host, prefix, data string) {
	src := filepath.Join(t.TempDir(), "up.txt")
	os.WriteFile(src, []byte("upload\n"), 0o644)
	local := func(p string) string { return filepath.Join(data, filepath.FromSlash(p)) }
	url := "root://" + host + "/" + prefix
	run(t, false, "xrdfs", host, "mkdir", prefix+"/into")
	run(t, false, "xrdfs", host, "mkdir", prefix+"/into")
	run(t, false, "xrdcp", src, url+"/into/")
	sameFile(t, local("into/up.txt"), []byte("upload\n"))
	if out, _ := run(t, false, "xrdfs", host, "ls", prefix+"/"); !strings.Contains(out, prefix+"/into") {
		t.Errorf("xrdfs ls %s/ does not list into: %q", prefix, out)
	}

	os.WriteFile(local("f"), []byte("hello"), 0o644)
	if out, err := run(t, true, "xrdcp", "-f", src, url+"/f/"); err == nil || !strings.Contains(out, "[3005]") {
		t.Errorf("xrdcp -f to f/: %v, want 3005\n%s", err, out)
	}
	sameFile(t, local("f"), []byte("hello"))
	if out, err := run(t, true, "xrdcp", src, url+"/nx/"); err == nil || !strings.Contains(out, "[3016]") {
		t.Errorf("xrdcp to nx/: %v, want 3016\n%s", err, out)
	}
	if fi, err := os.Stat(local("nx")); err == nil && !fi.IsDir() {
		t.Error("xrdcp to nx/ made a file nx")
	}
}
