package peers

import (
	"os"
	"os/exec"
	"path/filepath"
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

// RequireFile returns path's absolute form when it exists; otherwise the
// test is skipped, or failed under CI, naming what is missing (e.g. the
// project's Python environment that scripts/setup.sh makes).
func RequireFile(t testing.TB, path, what string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI: %v", what, err)
		}
		t.Skipf("%s missing (run scripts/setup.sh): %v", what, err)
	}
	return abs
}
