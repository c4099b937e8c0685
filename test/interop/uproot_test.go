package interop

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUproot reads a TTree branch over root:// and https:// and compares it
// with the same branch read from local disk.
func TestUproot(t *testing.T) {
	py := python(t)
	b := startBox(t, 1)
	local := filepath.Join(b.pools[0], "tree.root")
	script := `
import os, sys, numpy as np, uproot
local, root_url, https_url, cert = sys.argv[1:5]
os.environ["SSL_CERT_FILE"] = cert  # the box's self-signed certificate
n = 20000
rng = np.random.default_rng(7)
with uproot.recreate(local) as f:
    f["Events"] = {"pt": rng.exponential(20.0, n), "eta": rng.normal(0, 2, n), "nJet": rng.integers(0, 10, n).astype(np.int32)}
want = uproot.open(local)["Events"]["pt"].array(library="np")
for url in (root_url, https_url):
    with uproot.open(url + ":Events") as tree:
        got = tree["pt"].array(library="np")
        jets = tree["nJet"].array(library="np")
    assert np.array_equal(got, want), url
    assert len(jets) == n
    print("same", url.split(":")[0], len(got))
`
	out, _ := run(t, false, py, "-c", script, local, b.rootURL+"//store/tree.root", b.httpsURL+"/store/tree.root", b.certFile)
	if strings.Count(out, "same") != 2 {
		t.Fatalf("uproot: %s", out)
	}
}
