package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// modesProbe makes a directory with mode rw-r--r-- (no search bit),
// writes a file into it, and opens a new file with mode 0, as raw
// clients may, printing the results.
const modesProbe = `
import json, sys
from XRootD import client
from XRootD.client.flags import AccessMode, MkDirFlags, OpenFlags
host, prefix = sys.argv[1], sys.argv[2]
fs = client.FileSystem("root://" + host)
out = {}
s, _ = fs.mkdir(prefix + "/d644", MkDirFlags.NONE, AccessMode.UR | AccessMode.UW | AccessMode.GR | AccessMode.OR)
out["mkdir"] = s.message
f = client.File()
s, _ = f.open("root://%s/%s/d644/inside" % (host, prefix), OpenFlags.NEW)
out["inside"] = s.message
if s.ok:
    f.close()
g = client.File()
s, _ = g.open("root://%s/%s/mode0" % (host, prefix), OpenFlags.NEW, 0)
out["mode0"] = s.message
if s.ok:
    g.close()
print(json.dumps(out))
`

// New directories and files get owner rights whatever mode the client
// gives, as xrootd adds them: a directory made rw-r--r-- can be written
// into by the box, and a file opened with mode 0 is the owner's to read
// and write, not rw-r--r--.
func TestCreationModesGetOwnerRights(t *testing.T) {
	peers.Require(t, "xrootd")
	py := python(t)
	xdata := t.TempDir()
	os.Chmod(xdata, 0o777) // xrootd runs as its own user
	xhost := startXrootdOrigin(t, xdata)
	b := startBox(t, 1)
	for _, s := range []struct{ name, host, prefix, data string }{{"xrootd", xhost, "", xdata}, {"sitebox", b.rootHost, "/store", b.pools[0]}} {
		out, _ := run(t, false, py, "-c", modesProbe, s.host, s.prefix)
		var got map[string]string
		if err := json.Unmarshal([]byte(out[strings.LastIndex(out, "{"):]), &got); err != nil {
			t.Fatalf("%s: probe: %v\n%s", s.name, err, out)
		}
		dir, _ := os.Stat(filepath.Join(s.data, "d644"))
		file, _ := os.Stat(filepath.Join(s.data, "mode0"))
		var dm, fm os.FileMode
		if dir != nil {
			dm = dir.Mode().Perm()
		}
		if file != nil {
			fm = file.Mode().Perm()
		}
		t.Logf("%s: %v; d644 %#o, mode0 %#o", s.name, got, dm, fm)
		if !strings.Contains(got["inside"], "SUCCESS") {
			t.Errorf("%s: a file in a directory made rw-r--r--: %s", s.name, got["inside"])
		}
		if dm&0o700 != 0o700 {
			t.Errorf("%s: directory made rw-r--r-- is %#o: the owner cannot use it", s.name, dm)
		}
		if fm&0o077 != 0 || fm&0o600 != 0o600 {
			t.Errorf("%s: a file opened with mode 0 is %#o, want the owner's alone (0600)", s.name, fm)
		}
	}
}
