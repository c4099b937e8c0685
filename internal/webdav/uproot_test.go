package webdav

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// uprootScript writes a ROOT file to sys.argv[1] and reads it back over
// HTTP from sys.argv[2], as an analysis would: uproot's HTTPSource asks for
// many ranges per request and parses the multipart/byteranges answer.
const uprootScript = `
import sys, numpy as np, uproot
with uproot.recreate(sys.argv[1]) as f:
    f["t"] = {"x": np.arange(100000, dtype=np.int64), "y": np.linspace(0, 1, 100000)}
with uproot.open(sys.argv[2], handler=uproot.source.http.HTTPSource) as f:
    t = f["t"]
    print(t.num_entries, int(t["x"].array(library="np").sum()), round(float(t["y"].array(library="np").sum()), 3))
`

// TestRealUproot reads a ROOT file through the handler with uproot. It
// needs the project's Python environment and is skipped without it.
func TestRealUproot(t *testing.T) {
	py := peers.RequireFile(t, filepath.Join("..", "..", ".venv", "bin", "python"), "the Python venv with uproot")
	srv, dir := newServer(t, Config{})
	out, err := exec.Command(py, "-c", uprootScript, filepath.Join(dir, "t.root"), srv.URL+"/store/t.root").CombinedOutput()
	if err != nil {
		t.Fatalf("uproot: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasSuffix(got, "100000 4999950000 50000.0") {
		t.Fatalf("uproot read %q", got)
	}
}
