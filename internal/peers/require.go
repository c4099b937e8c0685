package peers

import (
	"os"
	"os/exec"
	"testing"
)

// Require skips the test when tool is not installed, except under CI
// (CI=true), where a missing peer is a failure: CI must prove interop.
func Require(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI but not installed: %v", tool, err)
		}
		t.Skipf("%s not installed", tool)
	}
	return p
}
