package box

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSmallestLimit: the tightest memory limit on the way to the root
// counts, and "max" (none) is skipped.
func TestSmallestLimit(t *testing.T) {
	root := t.TempDir()
	write := func(dir, v string) {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		os.WriteFile(filepath.Join(root, dir, "memory.max"), []byte(v+"\n"), 0o644)
	}
	write("/", "max")
	write("/system.slice", "8589934592")
	write("/system.slice/sitebox.service", "max")
	if got := smallestLimit(root, "/system.slice/sitebox.service", "memory.max"); got != 8<<30 {
		t.Errorf("limit %d, want the slice's 8 GiB", got)
	}
	write("/system.slice/sitebox.service", "1073741824")
	if got := smallestLimit(root, "system.slice/sitebox.service", "memory.max"); got != 1<<30 {
		t.Errorf("limit %d, want the service's 1 GiB", got)
	}
	if got := smallestLimit(root, "/", "memory.max"); got != 0 {
		t.Errorf("no limit at the root: %d, want 0", got)
	}
}
