package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// litmusAllowed are the litmus failures that do not matter for grid
// storage (docs/webdav.md): dead properties (PROPPATCH) are not stored,
// and the propget after propmanyns reads one back.
var litmusAllowed = map[string]string{
	"propset":    "dead properties (PROPPATCH) are not stored",
	"propmanyns": "dead properties (PROPPATCH) are not stored",
	"propget":    "reads back the dead properties of propmanyns",
}

var litmusFail = regexp.MustCompile(`(?m)^\s*\d+\.\s+(\S+?)\.*\s+\d+\.\s+\S+?\.*\s+FAIL\b(.*)$`)

// TestLitmus runs litmus's basic, copymove, props and http groups against
// a box: every failure must be one of litmusAllowed.
func TestLitmus(t *testing.T) {
	peers.Require(t, "litmus")
	b := startBox(t, 1)
	os.MkdirAll(filepath.Join(b.pools[0], "lit"), 0o755)
	var text string
	// One run per group: litmus stops after a group with failures.
	for _, group := range []string{"basic", "copymove", "props", "http"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "litmus", b.httpsURL+"/store/lit/")
		cmd.Dir = t.TempDir() // litmus writes debug.log here
		cmd.Env = append(os.Environ(), "TESTS="+group)
		out, _ := cmd.CombinedOutput() // non-zero exit on the allowed failures too
		cancel()
		if !strings.Contains(string(out), "summary for `"+group+"'") {
			t.Errorf("litmus group %s did not run:\n%s", group, out)
		}
		text += string(out)
	}
	for _, m := range litmusFail.FindAllStringSubmatch(text, -1) {
		if why, ok := litmusAllowed[m[1]]; ok {
			t.Logf("litmus %s fails as documented (%s)", m[1], why)
			continue
		}
		t.Errorf("litmus %s failed:%s", m[1], m[2])
	}
}
