package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Boxes probe each other and the director builds the site-to-site
// matrix; `sitebox bench matrix` prints it and draws it.
func TestProbeMatrix(t *testing.T) {
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	probe := "[probe]\ninterval = \"1s\"\nsize = \"4MiB\"\n"
	for _, n := range []string{"alpha", "beta", "gamma"} {
		startFedNode(t, n, strings.ToUpper(n[:1]), "[[export]]\nprefix = \"/store\"\npools = [\""+t.TempDir()+"\"]\n"+advertiseTo(region, "300ms")+probe)
	}
	out := t.TempDir()
	var table string
	waitFor(t, 20*time.Second, "every pair of boxes in the matrix", func() bool {
		table, _ = run(t, false, siteboxBin, "bench", "matrix", region.httpsURL, "--ca", region.certFile, "--out", out)
		n := 0
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, "| alpha") || strings.HasPrefix(line, "| beta") || strings.HasPrefix(line, "| gamma") {
				n += strings.Count(line, "(")
			}
		}
		return n == 6 // three boxes, two targets each
	})
	t.Logf("matrix:\n%s", table)
	if strings.Contains(table, "failed") {
		t.Errorf("probes failed:\n%s", table)
	}
	b, err := os.ReadFile(filepath.Join(out, "matrix.png"))
	if err != nil || len(b) < 100 || string(b[1:4]) != "PNG" {
		t.Errorf("matrix.png: %v (%d bytes)", err, len(b))
	}
}
